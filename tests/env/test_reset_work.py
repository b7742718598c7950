"""What ``reset`` does per episode (issue 35, 20): nothing that depends on the size of the
data. After the first episode of a task, a reset reads no file (not even a stat of the data
cache) and copies no task record whole; the customer's opening, its profile and its trips
are worked out once per task. Counted, not timed: the figures are in docs/performance.md
(``airline-gym bench --vs-reference``)."""

from __future__ import annotations

import os
import pickle
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from airline_gym.domain.tasks import Task, load_task_set
from airline_gym.env.airline_env import AirlineEnv


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Count file-system look-ups and whole copies of a task record while the block runs."""
    calls: Counter[str] = Counter()
    raw = Task.raw

    def counting(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    with monkeypatch.context() as patch:
        for name in ("stat", "lstat", "open", "listdir", "scandir"):
            patch.setattr(os, name, counting(f"os.{name}", getattr(os, name)))
        patch.setattr(Task, "raw", property(counting("Task.raw", lambda task: raw.fget(task))))
        yield calls


@pytest.mark.parametrize("intents", [True, False])
def test_a_reset_reads_no_file_and_copies_no_task_record(
    monkeypatch: pytest.MonkeyPatch, intents: bool
) -> None:
    env = AirlineEnv(user="scripted", user_kwargs={"intents": intents})
    ids = [t.id for t in load_task_set("tau2")]
    openings = {}
    for task_id in ids:  # the first episode of each task may read what it needs
        observation, _ = env.reset(seed=0, options={"task": task_id})
        openings[task_id] = observation[-1]["content"]
    with counted(monkeypatch) as calls:
        for _ in range(3):
            for task_id in ids:
                observation, _ = env.reset(seed=0, options={"task": task_id})
                assert observation[-1]["content"] == openings[task_id]  # the same customer
    assert calls == Counter(), calls


def test_an_env_mid_episode_still_pickles_small() -> None:
    """The customer's trip describer keeps what it read out of a pickle: the DB is not in it."""
    env = AirlineEnv(user="scripted", task="17")
    env.reset(seed=0)
    player = env.user.player
    assert player is not None and player.describe is not None
    player.describe("FQ8APE")  # reads the DB
    assert len(pickle.dumps(player)) < 20_000
    again = pickle.loads(pickle.dumps(player))
    assert again.describe("FQ8APE") == player.describe("FQ8APE")
