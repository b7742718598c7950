"""Benchmark the offline customers' reply cost against a hostile agent (issue 35, items 15-16).

Two figures, for the intent customer (a task that carries an intent) and the keyword customer
(the same task with ``intents=False``):

- ``huge``: the seconds of each reply when every agent message is ``--chars`` characters long
  (default 990,000), for ``--replies`` replies (default 12). A reply's cost must not grow with the
  turn.
- ``turns``: how many turns the customer answers in ``--seconds`` (default 10) with
  ``max_turns`` 100,000 and short agent messages, and the seconds per turn over the first and the
  last thousand. Flat per-turn cost means the two are alike.

The customer is called as the env calls it: one growing dialogue whose earlier messages are the
same objects at every call. Run::

    python -m airline_gym.testing.bench_customer

Prints one JSON object. Not a timed test: a loaded machine is slower.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from airline_gym.domain.prompts import GREETING

#: A τ² task whose customer plays an intent (add insurance after booking: refused, insist).
INTENT_TASK = "6"


def _customer(intents: bool, max_turns: int) -> Any:
    from airline_gym.domain.database import load_pristine
    from airline_gym.domain.tasks import load_task_set
    from airline_gym.users import ScriptedUser

    user = ScriptedUser(max_turns=max_turns, benchmark="tau2", intents=intents)
    user.reset(load_task_set("tau2")[INTENT_TASK])
    attach = getattr(user, "attach_db", None)
    if attach is not None:
        attach(load_pristine().fork())
    if intents and user.player is None:
        raise RuntimeError(f"task {INTENT_TASK} has no intent")
    return user


def huge_replies(intents: bool, chars: int, replies: int) -> list[float]:
    """Seconds of each reply to ``replies`` agent messages of ``chars`` characters each."""
    user = _customer(intents, max_turns=replies + 2)
    dialogue: list[dict[str, Any]] = [{"role": "assistant", "content": GREETING}]
    dialogue.append({"role": "user", "content": user.reply(dialogue)})
    times = []
    for i in range(replies):
        text = (f"Message {i}: " + "la " * chars)[:chars]
        dialogue.append({"role": "assistant", "content": text})
        start = time.perf_counter()
        answer = user.reply(dialogue)
        times.append(round(time.perf_counter() - start, 3))
        dialogue.append({"role": "user", "content": answer})
    return times


def many_turns(intents: bool, seconds: float) -> dict[str, Any]:
    """Turns answered in ``seconds`` (max_turns 100,000), and the cost per turn early and late."""
    user = _customer(intents, max_turns=100_000)
    dialogue: list[dict[str, Any]] = [{"role": "assistant", "content": GREETING}]
    dialogue.append({"role": "user", "content": user.reply(dialogue)})
    stamps = [time.perf_counter()]
    end = stamps[0] + seconds
    turns = 0
    while time.perf_counter() < end and turns < 100_000:
        dialogue.append({"role": "assistant", "content": f"Let me look into that ({turns})."})
        dialogue.append({"role": "user", "content": user.reply(dialogue)})
        turns += 1
        stamps.append(time.perf_counter())
    first = (stamps[min(1000, turns)] - stamps[0]) / max(1, min(1000, turns))
    last = (stamps[-1] - stamps[max(0, turns - 1000)]) / max(1, min(1000, turns))
    return {
        "turns": turns,
        "seconds": round(stamps[-1] - stamps[0], 2),
        "ms_per_turn_first_1000": round(first * 1000, 3),
        "ms_per_turn_last_1000": round(last * 1000, 3),
    }


def measure(chars: int, replies: int, seconds: float) -> dict[str, Any]:
    """Both figures for both customers."""
    out: dict[str, Any] = {"chars": chars, "load_average": [round(x, 2) for x in os.getloadavg()]}
    for name, intents in (("intent", True), ("keyword", False)):
        out[name] = {
            "huge_reply_s": huge_replies(intents, chars, replies),
            "turns": many_turns(intents, seconds),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--chars``, ``--replies``, ``--seconds``."""
    parser = argparse.ArgumentParser(prog="python -m airline_gym.testing.bench_customer")
    parser.add_argument("--chars", type=int, default=990_000)
    parser.add_argument("--replies", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    if not (1 <= args.chars <= 4_000_000 and 1 <= args.replies <= 1000):
        print("bench_customer: --chars 1..4000000, --replies 1..1000", file=sys.stderr)
        return 2
    if not 0 < args.seconds <= 600:
        print("bench_customer: --seconds must be in (0, 600]", file=sys.stderr)
        return 2
    print(json.dumps(measure(args.chars, args.replies, args.seconds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
