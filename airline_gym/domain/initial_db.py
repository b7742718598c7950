"""The database a task starts from: its ``initial_state`` applied as the reference's
environment ``set_state`` applies it.

In order: ``initialization_data.agent_data`` merged into the DB (nested objects merged key by
key, anything else replaced, then every record read again as db.json's are:
:func:`prepared_base`), each of ``initialization_actions`` run (a tool that fails refuses the
task), then every tool call of ``message_history`` run again, its result compared with the one
recorded there (JSON-parsed where it parses; a difference refuses the task):
:func:`replay_initial`. The episode's DB and the gold DB both start there
(:func:`start_view`). A task without ``initial_state`` starts from the pristine DB, at no cost.
"""

from __future__ import annotations

import json
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airline_gym.domain.database import TABLES, AirlineDB, PristineDB, clone
from airline_gym.domain.toolbox import execute
from airline_gym.errors import ConfigError

if TYPE_CHECKING:  # tasks.py runs a loading set's states with this module
    from airline_gym.domain.tasks import Task

__all__ = ["prepared_base", "replay_initial", "start_view"]

#: Databases merged with a task's ``agent_data``, most recently used last (7 MB each).
_MERGED: OrderedDict[tuple[int, str], tuple[PristineDB, PristineDB]] = OrderedDict()
_MERGED_KEPT = 8
#: Every database :func:`prepared_base` made (so it is never merged twice).
_PREPARED: weakref.WeakSet[PristineDB] = weakref.WeakSet()


def _merge(into: dict[str, Any], update: Mapping[str, Any]) -> None:
    """The reference's update of a model with a dict: objects merged, the rest replaced."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = clone(value)


def prepared_base(task: Task, base: PristineDB) -> PristineDB:
    """``base`` with the task's ``initialization_data.agent_data`` merged in (``base`` itself
    when it has none, or is such a database already); kept for the last few tasks."""
    agent_data = _agent_data(task)
    if not agent_data or base in _PREPARED:
        return base
    key = (id(base), json.dumps([task.id, agent_data], sort_keys=True))
    kept = _MERGED.get(key)
    if kept is not None and kept[0] is base:
        _MERGED.move_to_end(key)
        return kept[1]
    raw = {name: clone(dict(base.table(name))) for name in TABLES}
    _merge(raw, agent_data)
    try:
        merged = PristineDB.from_json(raw)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(
            f"task {task.id!r}: 'initial_state.initialization_data.agent_data' does not make an "
            f"airline database ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    _MERGED[key] = (base, merged)
    _PREPARED.add(merged)
    while len(_MERGED) > _MERGED_KEPT:
        _MERGED.popitem(last=False)
    return merged


def _as_json(content: Any) -> Any:
    try:
        return json.loads(content)
    except (TypeError, ValueError, RecursionError):
        return content


def replay_initial(task: Task, db: AirlineDB, history: bool = True) -> None:
    """Run the task's ``initialization_actions`` (and, with ``history``, the tool calls of its
    ``message_history``) on ``db``; a one-line ``ConfigError`` when one fails or differs."""
    state = task.initial_state
    if state is None:
        return
    for i, action in enumerate(state.get("initialization_actions") or []):
        done = execute(db, action["func_name"], action["arguments"])
        if done.error:
            raise ConfigError(
                f"task {task.id!r}: 'initial_state.initialization_actions[{i}]' "
                f"({action['func_name']}) fails on this database: {done.content[:300]}"
            )
    if not history:
        return
    messages = state.get("message_history") or []
    results = {m["id"]: (i, m) for i, m in enumerate(messages) if m.get("role") == "tool"}
    for message in messages:
        for call in message.get("tool_calls") or []:
            index, recorded = results[str(call.get("id", ""))]
            got = execute(db, call["name"], call["arguments"]).content
            if _as_json(got) != _as_json(recorded.get("content")):
                raise ConfigError(
                    f"task {task.id!r}: 'initial_state.message_history[{index}]' records a "
                    f"result of {call['name']} that the database does not give: recorded "
                    f"{str(recorded.get('content'))[:120]!r}, got {got[:120]!r}"
                )


def start_view(task: Task, base: PristineDB, history: bool = True) -> AirlineDB:
    """A view of the database the task starts from (see the module docstring); ``base`` is
    the pristine DB, or the one :func:`prepared_base` made of it for this task."""
    view = prepared_base(task, base).fork()
    replay_initial(task, view, history)
    return view


def _agent_data(task: Task) -> Any:
    state = task.initial_state
    return None if state is None else (state.get("initialization_data") or {}).get("agent_data")
