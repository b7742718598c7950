"""What both benchmarks share: the sample booking, the timing helper and the gold episode."""

from __future__ import annotations

import gc
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from airline_gym.domain.database import AirlineDB, PristineDB
from airline_gym.domain.prompts import GREETING
from airline_gym.domain.tasks import Task
from airline_gym.domain.toolbox import execute

__all__ = [
    "SAMPLE_BOOKING",
    "gold_episode",
    "median",
    "median_seconds",
    "reset_every",
    "retained_per_item",
    "sample_booking",
    "step_at_depth",
]


# The spec's worked example: one economy seat JFK-ATL, insurance and one paid bag (221 dollars).
SAMPLE_BOOKING: dict[str, Any] = {
    "user_id": "mia_li_3668",
    "origin": "JFK",
    "destination": "ATL",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [{"flight_number": "HAT057", "date": "2024-05-20"}],
    "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
    "payment_methods": [{"payment_id": "credit_card_4421486", "amount": 221}],
    "total_baggages": 1,
    "nonfree_baggages": 1,
    "insurance": "yes",
}


def sample_booking(**changes: Any) -> dict[str, Any]:
    """A fresh copy of :data:`SAMPLE_BOOKING` with ``changes`` (safe to edit)."""
    import copy

    return {**copy.deepcopy(SAMPLE_BOOKING), **changes}


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    """Median wall time of ``fn()`` over ``repeat`` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def gold_episode(task: Task, base: PristineDB) -> tuple[AirlineDB, list[dict[str, Any]]]:
    """Replay the task's gold actions on a fresh view; return it with an OpenAI transcript."""
    db = base.fork()
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": GREETING}]
    for i, action in enumerate(task.actions):
        result = execute(db, action.name, action.arguments)
        call = {
            "id": f"g{i}",
            "type": "function",
            "function": {"name": action.name, "arguments": json.dumps(action.arguments)},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"g{i}", "content": result.content})
    if task.communicate_info:
        messages.append({"role": "assistant", "content": " ".join(task.communicate_info)})
    return db, messages


def median(
    fn: Callable[[Any], Any],
    repeat: int,
    setup: Callable[[], Any] | None = None,
    warmup: bool = True,
) -> float:
    """Median seconds of ``fn(setup())`` over ``repeat`` runs (setup untimed; one warm-up)."""
    if warmup:
        fn(setup() if setup else None)
    times = []
    for _ in range(repeat):
        arg = setup() if setup else None
        start = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def retained_per_item(make: Callable[[int], Any], count: int) -> float:
    """Bytes (tracemalloc, all threads) still allocated per item while ``count`` items made by
    ``make(i)`` are alive."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        alive = [make(i) for i in range(count)]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del alive
    gc.collect()
    return max(grown, 0) / count


def reset_every(reset: Callable[[], Any], steps: int) -> Callable[[], None]:
    """A ``setup`` for :func:`_median` that calls ``reset()`` before every ``steps``-th run."""
    count = [0]

    def setup() -> None:
        if count[0] % steps == 0:
            reset()
        count[0] += 1

    return setup


def step_at_depth(
    reset: Callable[[], Any],
    step: Callable[[], Any],
    depth: int,
    window: int = 20,
    episodes: int = 1,
) -> float:
    """Median seconds of one ``step()`` taken as the episode's ``depth``-th to
    ``depth + window - 1``-th step, over ``episodes`` episodes (resets and the steps before
    ``depth`` untimed): how a step's cost depends on the history before it."""
    times = []
    for _ in range(episodes):
        reset()
        for _ in range(depth - 1):
            step()
        for _ in range(window):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
    return statistics.median(times)
