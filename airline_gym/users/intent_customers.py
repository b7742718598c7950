"""The intent-playing customer of a task (:func:`customer_for`), worked out once per task.

A generated task's customer can say every reservation id of its requests (unless its intent
lists them as unknown); a benchmark task's customer only the ids its scenario names, and words
any other reservation by its trip (read from the DB), as the benchmark's customers do.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from airline_gym.domain.tasks import Task
from airline_gym.users.intent_source import carries_intent, task_intent
from airline_gym.users.intent_user import IntentPlayer
from airline_gym.users.scripted_rules import RESERVATION_ID_RE
from airline_gym.users.trips import trips

__all__ = ["customer_for"]


def customer_for(
    task: Task, benchmark: str | None = None, max_turns: int = 30, data_dir: Any = None
) -> IntentPlayer | None:
    """The intent-playing customer of ``task``, or None when it has no intent.

    A generated task's customer can say every reservation id of its requests (unless its intent
    lists them as unknown); a benchmark task's customer only the ids its scenario names, and
    words any other reservation by its trip (read from the DB), as the benchmark's customers do.
    What a task's customer is (its intent, the gold writes of each request, the ids it can say)
    is worked out once per task; each call returns a fresh player of it.
    """
    key = (id(task), benchmark, max_turns, None if data_dir is None else str(data_dir))
    with _PLAYERS_LOCK:
        known = _PLAYERS.get(key)
        if known is not None:
            _PLAYERS.move_to_end(key)
    if known is not None and known[0] is task:
        template = known[1]
    else:
        template = _player_of(task, benchmark, max_turns, data_dir)
        with _PLAYERS_LOCK:  # the task is kept with its player: its id() is not reused
            _PLAYERS[key] = (task, template)
            while len(_PLAYERS) > _PLAYERS_KEPT:
                _PLAYERS.popitem(last=False)
    return None if template is None else template.fresh()


def _player_of(
    task: Task, benchmark: str | None, max_turns: int, data_dir: Any
) -> IntentPlayer | None:
    intent = task_intent(task, benchmark)
    if intent is None:
        return None
    if carries_intent(task):
        return IntentPlayer(intent, max_turns, data_dir=data_dir)
    text = " ".join(str(v) for v in task.instructions.values() if v)
    named = frozenset(RESERVATION_ID_RE.findall(text))
    return IntentPlayer(intent, max_turns, named, trips(data_dir), data_dir=data_dir)


#: The players :func:`customer_for` made, by task (most recent last, at most _PLAYERS_KEPT).
_PLAYERS: OrderedDict[tuple[Any, ...], tuple[Task, IntentPlayer | None]] = OrderedDict()
_PLAYERS_KEPT = 1024
_PLAYERS_LOCK = threading.Lock()
