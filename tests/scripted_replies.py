"""Scripted model replies the tests serve from a local OpenAI-compatible server."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from airline_gym.testing.openai_server import Reply


class NumberingCustomer:
    """A customer model whose every reply names the request's number (so no two match); it
    stops on the fourth customer turn."""

    def __init__(self) -> None:
        self.numbers = itertools.count(1)
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            number = next(self.numbers)
        turns = sum(1 for m in body["messages"] if m["role"] == "user")
        stop = " ###STOP###" if turns >= 4 else ""
        return Reply(content=f"reply {number} to turn {turns}: my id is mia_li_3668.{stop}")


def judge_says(met: bool, tasks: Iterable[Any]) -> Callable[[dict[str, Any]], Reply]:
    """An NL judge that meets (or not) every assertion of ``tasks`` it is asked about."""
    tasks = list(tasks)

    def respond(body: dict[str, Any]) -> Reply:
        text = body["messages"][1]["content"]
        listed = text[text.rindex("expectedOutcomes:") :]
        outcomes = [a for t in tasks for a in t.nl_assertions if repr(a) in listed]
        results = [
            {"expectedOutcome": a, "reasoning": "scripted", "metExpectation": met} for a in outcomes
        ]
        return Reply(json.dumps({"results": results}))

    return respond
