"""The scripted models of ``bench --e2e`` and the fast server that plays them, in its own process.

:class:`GoldScript` answers both roles from the request body alone: the agent's model replays
each task's gold actions, then confirms the facts to communicate; the customer's model asks
for help once and then says ``###STOP###``. :class:`ServerProcess` runs
:mod:`airline_gym.testing.fast_openai_server` with it in a child process, so that the
server's CPU is never counted as the harness's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

from airline_gym.testing.openai_reply import Reply

__all__ = ["REF", "STOP", "TASK_IDS", "GoldScript", "ServerProcess"]

REF = re.compile(r"\[ref:([^\]#]+)#(\d+)\]")
STOP = "Thanks, that is all. ###STOP###"
TASK_IDS = [str(i) for i in range(10)]
SERVER_MODULE = "airline_gym.testing.fast_openai_server"


class GoldScript:
    """The scripted models: a gold agent and a short customer (a responder for the server).

    The customer's first message carries ``[ref:<task>#<n>]`` (``n`` numbers the episodes), which
    every later request of that episode repeats in its history; it identifies the task for the
    agent's replies and the episode for the turnaround figures (see :attr:`turnaround`).
    """

    def __init__(self) -> None:
        from airline_gym.domain.prompts import scenario_text
        from airline_gym.domain.tasks import load_task_set

        self.tasks = {task.id: task for task in load_task_set()}
        self.by_scenario = {scenario_text(t): t.id for t in self.tasks.values()}
        self.episodes = 0
        self.answered: dict[str, float] = {}  # episode -> when its last reply was sent
        self.turnaround: list[float] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        return self._agent(messages) if body.get("tools") else self._customer(messages)

    def replied(self, body: dict[str, Any], when: float) -> None:
        """The server sent its reply to ``body`` at ``when`` (``time.monotonic()``)."""
        key = self._episode(body.get("messages") or [])
        if key is not None:
            self.answered[key] = when

    def report(self) -> dict[str, Any]:
        """The turnaround times recorded since the last :meth:`reset`."""
        return {"turnaround": self.turnaround, "episodes": self.episodes}

    def reset(self) -> dict[str, Any]:
        """Forget the recorded turnaround times."""
        self.turnaround = []
        return {}

    def arrived(self, body: dict[str, Any], when: float) -> None:
        """A request arrived at ``when``: record how long after the episode's previous reply."""
        key = self._episode(body.get("messages") or [])
        if key is not None and key in self.answered:
            self.turnaround.append(when - self.answered[key])

    def _episode(self, messages: list[dict[str, Any]]) -> str | None:
        for message in messages[:4]:
            match = REF.search(str(message.get("content") or ""))
            if match:
                return f"{match.group(1)}#{match.group(2)}"
        return None

    def _customer(self, messages: list[dict[str, Any]]) -> Reply:
        if any(m.get("role") == "assistant" for m in messages):
            return Reply(STOP)
        system = str(messages[0].get("content", "")) if messages else ""
        scenario = system.split("<scenario>\n", 1)[-1].rsplit("\n</scenario>", 1)[0]
        task_id = self.by_scenario.get(scenario, "unknown")
        self.episodes += 1
        return Reply(f"Hi, I need help with a booking. [ref:{task_id}#{self.episodes}]")

    def _agent(self, messages: list[dict[str, Any]]) -> Reply:
        key = self._episode(messages)
        task = self.tasks.get(key.split("#")[0]) if key else None
        if task is None:
            return Reply("Could you tell me your user id?")
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done < len(task.actions):
            action = task.actions[done]
            return Reply(tool_calls=[{"name": action.name, "arguments": action.arguments}])
        facts = ", ".join(task.communicate_info)
        return Reply(f"To confirm: {facts}." if facts else "Your request is complete.")


class ServerProcess:
    """The fast scripted server in its own process (its CPU is not the harness's)."""

    def __init__(
        self,
        responder: str = "airline_gym.testing.bench_script:GoldScript",
        latency: float = 0.0,
        jitter: float = 0.0,
    ) -> None:
        argv = [sys.executable, "-m", SERVER_MODULE, "--responder", responder]
        self.proc = subprocess.Popen(
            [*argv, "--latency", str(latency), "--jitter", str(jitter)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the scripted server did not start")
        self.base_url = json.loads(line)["base_url"]
        self.root = self.base_url.rsplit("/v1", 1)[0]

    def call(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        import urllib.request

        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.root + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
