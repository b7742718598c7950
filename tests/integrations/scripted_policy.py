"""A scripted model behind a local OpenAI-compatible server, shared by the adapters' tests.

Task 17 is solved (after a word to the customer); task 3 is answered wrongly (a failing lookup,
a cancellation nobody asked for, no answer given). Which task a request belongs to is read from
the customer's opening message, how far it is from the number of model replies so far. The
same messages replayed against an in-process env (:func:`in_process`) give the grades a library
must report.
"""

from __future__ import annotations

import json
from typing import Any

from airline_gym.agents import ScriptedAgent, text_message, tool_call_message
from airline_gym.env import AirlineEnv
from airline_gym.harness.runner import EpisodeResult, run_episode
from airline_gym.testing.openai_server import Reply


def scripts(tau2_tasks: Any) -> dict[str, list[dict[str, Any]]]:
    """The model's messages per task: 17 gold (1.0), 3 wrong (0.0)."""
    gold = [
        tool_call_message(a.name, a.arguments, f"g{i}")
        for i, a in enumerate(tau2_tasks["17"].actions)
    ]
    wrong = [
        tool_call_message("get_reservation_details", {"reservation_id": "NOPE00"}, "w0"),
        tool_call_message("cancel_reservation", {"reservation_id": "JMO1MG"}, "w1"),
    ]
    done = tool_call_message("done", {}, "end")
    return {"17": [text_message("Sure, let me look into that."), *gold, done], "3": [*wrong, done]}


def as_reply(message: dict[str, Any]) -> Reply:
    calls = [
        {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
        for c in message.get("tool_calls") or []
    ]
    return Reply(content=message.get("content"), tool_calls=calls or None)


class Model:
    """The scripted policy behind the server (see the module docstring)."""

    def __init__(self, scripts: dict[str, list[dict[str, Any]]]) -> None:
        self.scripts = scripts
        self.openers = {opening(task_id): task_id for task_id in scripts}

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        task_id = self.openers[text(messages[2]["content"])]
        replies = sum(1 for m in messages[3:] if m["role"] == "assistant")
        return as_reply(self.scripts[task_id][replies])


def text(content: Any) -> str:
    """A message's text, whether sent as a string or as content parts."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


def opening(task_id: str) -> str:
    _, info = AirlineEnv(user="scripted").reset(options={"task": task_id})
    return str(info["messages"][2]["content"])


def in_process(
    task_id: str, seed: int, messages: list[dict[str, Any]], benchmark: str = "tau2"
) -> EpisodeResult:
    env = AirlineEnv(user="scripted", benchmark=benchmark)
    return run_episode(env, ScriptedAgent(messages), task_id, seed)
