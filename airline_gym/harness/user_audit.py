"""The customer-simulator audit of results files and runs (the rules: domain.user_audit).

:func:`audit_file` audits every simulation of a tau2 results file (ours, ``tau2 run``'s, a
leaderboard submission) against its task's ``user_scenario``: the file's embedded tasks first,
else a task set. A simulation whose task has no scenario is listed as not audited, with why.
:func:`audit_summary` gives the counts that ``eval`` adds to its summary; each simulation of
an ``eval`` run with the LLM customer carries its flags under :data:`USER_AUDIT_KEY`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.benchmarks import benchmark_tasks, version_of
from airline_gym.domain.tasks import load_task_set, task_key
from airline_gym.domain.user_audit import AUDIT_KINDS, Flag, audit_conversation, count_kinds
from airline_gym.harness.results import JSONObject, Results

__all__ = [
    "USER_AUDIT_KEY",
    "FileAudit",
    "SimulationAudit",
    "audit_file",
    "audit_record",
    "audit_summary",
    "audit_totals",
    "format_audit_summary",
    "format_counts",
    "shorten",
]

#: The key of a simulation record's flags (a list of ``{"kind", "message_index", "evidence"}``).
USER_AUDIT_KEY = "user_audit"


@dataclass
class SimulationAudit:
    """The flags of one simulation (``error``: why it could not be audited)."""

    simulation_id: str
    task_id: str
    trial: int
    flags: list[Flag] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> JSONObject:
        """As JSON: ids, ``user_audit`` (the flags) and ``error`` when not audited."""
        out: JSONObject = {
            "simulation_id": self.simulation_id,
            "task_id": self.task_id,
            "trial": self.trial,
            USER_AUDIT_KEY: self.flags,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class FileAudit:
    """Every simulation of one results file, audited."""

    path: str
    simulations: list[SimulationAudit]
    #: Where the scenarios came from when not from the file's own tasks (which version, why).
    scenarios: str | None = None

    @property
    def audited(self) -> list[SimulationAudit]:
        """The simulations that could be audited."""
        return [s for s in self.simulations if s.error is None]

    def counts(self) -> dict[str, int]:
        """Flags per kind (every kind, zeros included)."""
        return count_kinds([f for s in self.audited for f in s.flags])

    def to_dict(self) -> JSONObject:
        """As JSON: counts, rates per audited simulation, and every simulation's flags."""
        return {
            "path": self.path,
            **audit_totals([self]),
            "results": [s.to_dict() for s in self.simulations],
        }


def audit_totals(audits: Sequence[FileAudit]) -> JSONObject:
    """Simulations, audited, flagged, flags per kind and per audited simulation, over files."""
    audited = [s for a in audits for s in a.audited]
    counts = count_kinds([f for s in audited for f in s.flags])
    return {
        "simulations": sum(len(a.simulations) for a in audits),
        "audited": len(audited),
        "flagged_simulations": sum(1 for s in audited if s.flags),
        "counts": counts,
        "rates": {k: n / len(audited) if audited else None for k, n in counts.items()},
    }


def audit_record(sim: Mapping[str, Any], task_raw: Mapping[str, Any]) -> list[Flag]:
    """The flags of one simulation record against its raw task (``user_scenario`` required)."""
    scenario = task_raw.get("user_scenario")
    if not isinstance(scenario, Mapping):
        raise ValueError(f"task {task_raw.get('id')!r} has no user_scenario")
    return audit_conversation(scenario, sim.get("messages") or [])


def _tasks_by_id(
    results: Results, tasks: str | os.PathLike[str] | None, benchmark: str | None
) -> tuple[Mapping[str, Any], str | None]:
    """Raw tasks by id, and how the benchmark version was told (None: the file's own tasks):
    the file's embedded tasks, else ``tasks``, else the task set of the version the file
    records (else ``benchmark``, else tau2)."""
    if results.tasks:
        return {str(raw.get("id")): raw for raw in results.tasks}, None
    version, how = version_of(results.info, None, benchmark)
    task_set = load_task_set(benchmark_tasks(tasks, version))
    return {task.id: task.raw for task in task_set}, f"benchmark {version} ({how})"


def audit_file(
    path: str | os.PathLike[str],
    tasks: str | os.PathLike[str] | None = None,
    task_id_map: Mapping[str, str] | None = None,
    benchmark: str | None = None,
) -> FileAudit:
    """Audit every simulation of a results file.

    ``tasks``: the task set for a file without embedded tasks (default: the task set of the
    benchmark version the file records, else ``benchmark``, else tau2); ``task_id_map``:
    simulation id -> real task id, for files whose task ids are wrong. A bad file raises a
    one-line error.
    """
    results = Results.load(path, need_messages=True)
    by_id, scenarios = _tasks_by_id(results, tasks, benchmark)
    id_map = task_id_map or {}
    audits = []
    for sim in results.simulations:
        sim_id = str(sim.get("id") or "")
        task_id = task_key(id_map.get(sim_id, sim.get("task_id")))
        audit = SimulationAudit(sim_id, task_id, int(sim.get("trial") or 0))
        raw = by_id.get(task_id)
        try:
            if raw is None:
                raise ValueError(f"no task {task_id!r} in the file's tasks or the task set")
            audit.flags = audit_record(sim, raw)
        except ValueError as exc:
            audit.error = str(exc)
        audits.append(audit)
    return FileAudit(str(path), audits, scenarios)


def audit_summary(simulations: Iterable[Mapping[str, Any]]) -> JSONObject | None:
    """Counts of the flags recorded on ``simulations`` (``None`` when none was audited); one
    pass, holding only the flags."""
    audited = flagged = 0
    flags: list[JSONObject] = []
    for sim in simulations:
        found = sim.get(USER_AUDIT_KEY)
        if not isinstance(found, list):
            continue
        audited += 1
        flagged += bool(found)
        where = {"task_id": str(sim.get("task_id")), "trial": int(sim.get("trial") or 0)}
        flags.extend({**where, **flag} for flag in found)
    if not audited:
        return None
    return {
        "simulations": audited,
        "flagged_simulations": flagged,
        "counts": count_kinds(flags),
        "flags": flags,
    }


def shorten(text: str, chars: int) -> str:
    """``text`` cut to ``chars`` characters, an ellipsis marking a cut."""
    return text if len(text) <= chars else text[: chars - 1] + "…"


def format_counts(counts: Mapping[str, int]) -> str:
    """``premature_stop 2, leak 0, ...`` in :data:`AUDIT_KINDS` order."""
    return ", ".join(f"{kind} {counts.get(kind, 0)}" for kind in AUDIT_KINDS)


def format_audit_summary(summary: Mapping[str, Any], shown: int = 10, chars: int = 100) -> str:
    """:func:`audit_summary` as text: the counts, then the first ``shown`` flagged turns."""
    lines = [
        f"customer audit: {summary['flagged_simulations']} of {summary['simulations']} "
        f"simulations flagged: {format_counts(summary['counts'])}"
    ]
    flags = summary["flags"]
    for flag in flags[:shown]:
        text = shorten(flag["evidence"], chars)
        lines.append(
            f"  task {flag['task_id']} trial {flag['trial']} message {flag['message_index']} "
            f"{flag['kind']}: {text}"
        )
    if len(flags) > shown:
        lines.append(f"  ... and {len(flags) - shown} more (user_audit in the results file)")
    return "\n".join(lines)
