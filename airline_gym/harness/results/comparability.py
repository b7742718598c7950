"""Whether two runs can be compared: what differs between them besides the agent.

Read generically from each file's ``info`` and ``tasks``, so that any results file works (ours,
``tau2 run``'s, leaderboard submissions):

- the task set: the task ids simulated, and the content of every shared task (tau2 vs tau3
  tasks, an edited tasks file); task records are compared after dropping what only the writer's
  defaults add (``null`` fields, ``requestor: "assistant"``, the default reward basis), so a
  ``tau2 run`` file and ours on the same tasks agree;
- ``info["benchmark"]`` (absent: ``tau2``);
- ``info["reward_basis"]`` (absent or null: each task's own basis);
- the customer: scripted or LLM, and the LLM's model (``info["user_info"]``);
- the protocol: ``info["protocol"]``; absent means ``gym`` in an airline-gym file (written
  before the protocol was recorded) and ``leaderboard`` in any other (``tau2 run``'s agent).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from airline_gym.errors import ConfigError
from airline_gym.harness.results.io import Results
from airline_gym.harness.results.metrics import info_of, task_outcomes, task_sort_key

__all__ = ["Difference", "RunsDiffer", "check_comparable", "differences"]

_DEFAULT_BASIS = ["DB", "COMMUNICATE"]
_SHOWN_IDS = 6


@dataclass(frozen=True)
class Difference:
    """One way two runs differ: ``what`` (``task set``, ``benchmark``...) and a sentence."""

    what: str
    text: str

    def __str__(self) -> str:
        return f"{self.what}: {self.text}"


def _task_records(results: Any) -> dict[str, Any]:
    tasks = results.tasks if isinstance(results, Results) else None
    if isinstance(results, Mapping):
        tasks = results.get("tasks")
    records = tasks if isinstance(tasks, list) else []
    return {str(t["id"]): t for t in records if isinstance(t, Mapping) and "id" in t}


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def canonical_task(record: Mapping[str, Any]) -> str:
    """A task record as canonical JSON, without what only a writer's defaults add."""
    task = _without_nulls(record)
    criteria = task.get("evaluation_criteria")
    if isinstance(criteria, dict):
        if criteria.get("reward_basis") == _DEFAULT_BASIS:
            del criteria["reward_basis"]
        actions = criteria.get("actions")
        if isinstance(actions, list):
            for action in actions:
                if isinstance(action, dict) and action.get("requestor") == "assistant":
                    del action["requestor"]
    return json.dumps(task, sort_keys=True, ensure_ascii=False)


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_SHOWN_IDS])
    return shown + (f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else "")


def _task_set(a: Any, b: Any) -> list[Difference]:
    ids_a, ids_b = set(task_outcomes(a)), set(task_outcomes(b))
    out = []
    shared = len(ids_a & ids_b)
    for label, only in (("A", ids_a - ids_b), ("B", ids_b - ids_a)):
        if only:
            ordered = sorted(only, key=task_sort_key)
            out.append(
                Difference(
                    "task set",
                    f"{len(only)} task(s) only in {label} ({_ids(ordered)}); "
                    f"{shared} task(s) in both",
                )
            )
    records_a, records_b = _task_records(a), _task_records(b)
    changed = [
        t
        for t in sorted(ids_a & ids_b, key=task_sort_key)
        if t in records_a
        and t in records_b
        and canonical_task(records_a[t]) != canonical_task(records_b[t])
    ]
    if changed:
        out.append(
            Difference(
                "task set",
                f"{len(changed)} of the {shared} shared task(s) differ in content "
                f"({_ids(changed)}): not the same tasks (e.g. tau2 vs tau3)",
            )
        )
    return out


def _basis(info: Mapping[str, Any]) -> str:
    basis = info.get("reward_basis")
    if basis is None:
        return "each task's own"
    if isinstance(basis, list):
        return ", ".join(sorted(map(str, basis))) or "none"
    return str(basis)


def _customer(info: Mapping[str, Any]) -> str:
    user = info.get("user_info")
    if not isinstance(user, Mapping):
        return "not recorded"
    kind = str(user.get("implementation") or "not recorded")
    if kind == "user_simulator":
        return f"LLM {user.get('llm')}"
    return kind.removesuffix("_user")


def _protocol(info: Mapping[str, Any]) -> str:
    protocol = info.get("protocol")
    if protocol:
        return str(protocol)
    return "gym" if "airline_gym_version" in info else "leaderboard"


def differences(a: Any, b: Any) -> list[Difference]:
    """What differs between runs ``a`` and ``b`` besides the agent (empty: comparable).

    ``a`` and ``b`` are :class:`Results`, their dicts, or bare lists of simulations.
    """
    info_a, info_b = info_of(a), info_of(b)
    out = _task_set(a, b)
    for what, read in (
        ("benchmark", lambda info: str(info.get("benchmark") or "tau2")),
        ("reward basis", _basis),
        ("customer", _customer),
        ("protocol", _protocol),
    ):
        value_a, value_b = read(info_a), read(info_b)
        if value_a != value_b:
            out.append(Difference(what, f"A {value_a}, B {value_b}"))
    return out


class RunsDiffer(ConfigError):
    """Two runs that differ besides the agent, side by side without ``allow_different``; one
    :meth:`lines` line per difference (``compare`` and ``report`` say the same)."""

    def __init__(self, found: Sequence[Difference]) -> None:
        self.found = list(found)
        super().__init__("; ".join(self.lines()))

    def lines(self) -> list[str]:
        """One sentence per difference."""
        return [
            f"cannot compare, the runs differ in {d} (--allow-different to compare anyway)"
            for d in self.found
        ]


def check_comparable(a: Any, b: Any, allow_different: bool = False) -> list[Difference]:
    """:func:`differences` of ``a`` and ``b``; :class:`RunsDiffer` when there are some and
    ``allow_different`` is false (the rule of every command that sets two runs side by side)."""
    found = differences(a, b)
    if found and not allow_different:
        raise RunsDiffer(found)
    return found
