"""Gather one or two results files into the report's data: overviews, simulations, flips."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from airline_gym.domain.database import PristineDB
from airline_gym.domain.tasks import DEFAULT_TASK_SET, Task, load_task_set, parse_tasks
from airline_gym.errors import AirlineGymError
from airline_gym.harness.regrade import pristine_db, recorded_basis
from airline_gym.harness.report.grades import simulation_grade
from airline_gym.harness.report.overview import run_overview
from airline_gym.harness.report.records import simulation_entry
from airline_gym.harness.results.compare import compare
from airline_gym.harness.results.io import JSONObject, Results, check_unique

__all__ = ["RunData", "build_report_data", "load_run"]

RunData = tuple[JSONObject, list[JSONObject]]  # (overview, simulation entries)


def _tasks(results: Results, source: str) -> tuple[Mapping[str, Task] | None, str]:
    """The tasks to re-grade against (embedded ones first, else the recorded task set)."""
    if results.tasks:
        try:
            return parse_tasks(results.tasks, f"{source}: tasks"), ""
        except (AirlineGymError, ValueError, TypeError, KeyError) as exc:
            return None, f"the file's tasks are unreadable ({exc})"
    name = results.info.get("task_set") or DEFAULT_TASK_SET
    try:
        return load_task_set(str(name)).tasks, ""
    except (AirlineGymError, OSError, ValueError, TypeError, KeyError) as exc:
        return None, f"task set {name!r} is unreadable ({exc})"


def _base() -> tuple[PristineDB | None, str]:
    try:
        return pristine_db(), ""
    except (AirlineGymError, OSError) as exc:
        return None, f"no airline DB to replay on ({exc})"


def _with_limit(entry: JSONObject, info: Mapping[str, object]) -> str:
    """The recorded cause, plus the limit an episode ran into (``max_steps``/``max_errors``)."""
    cause = str(entry["grade"]["cause"])
    reason = entry["termination"]
    if reason == "too_many_errors":
        limit = f"{entry['tool_errors']} tool errors; the run allowed {info.get('max_errors', '?')}"
    elif reason == "max_steps":
        limit = (
            f"{len(entry['messages'])} messages; the run allowed {info.get('max_steps', '?')} steps"
        )
    else:
        return cause
    return f"{limit} ({cause})" if cause else limit


def load_run(
    path: str | os.PathLike[str],
    task_id_map: Mapping[str, str] | None = None,
) -> tuple[Results, RunData]:
    """Read a results file; re-grade each simulation; its overview and simulation entries.

    ``task_id_map`` (simulation id -> task id) corrects files whose task ids are wrong.
    """
    results = Results.load(path)
    if task_id_map:
        for sim in results.simulations:
            sim_id = str(sim.get("id", ""))
            if sim_id in task_id_map:
                sim["task_id"] = task_id_map[sim_id]
    check_unique(results.simulations, str(path))
    basis = recorded_basis(results.info, str(path))
    tasks, why_not = _tasks(results, str(path))
    base, no_base = _base() if tasks is not None else (None, "")
    why_not = why_not or no_base
    entries = []
    for sim in results.simulations:
        task = None if tasks is None or base is None else tasks.get(str(sim.get("task_id")))
        reason = why_not or ("" if task else f"no task {sim.get('task_id')!r} in the task set")
        if "messages" not in sim:
            task, reason = None, "the file records no messages for this simulation"
        entry = simulation_entry(sim, simulation_grade(sim, task, base, reason, basis))
        entry["grade"]["cause"] = _with_limit(entry, results.info)
        entries.append(entry)
    overview = run_overview(Path(path).name, results)
    overview["regrade_disagreements"] = sum(
        1
        for e in entries
        if e["grade"]["regraded"] is not None
        and e["reward"] is not None
        and abs(e["grade"]["regraded"] - e["reward"]) > 1e-9
    )
    overview["judge_failures"] = sum(1 for e in entries if e["grade"]["judge_error"])
    return results, (overview, entries)


def flips(a: Results, b: Results) -> list[JSONObject]:
    """Tasks whose success rate changed from run A to run B (improved or regressed)."""
    return [
        {
            "task": t.task_id,
            "change": t.change,
            "a": list(t.a) if t.a else None,
            "b": list(t.b) if t.b else None,
        }
        for t in compare(a, b).tasks
        if t.change in ("improved", "regressed")
    ]


def build_report_data(runs: Sequence[tuple[Results, RunData]]) -> JSONObject:
    """The page's embedded data: each run's simulations, and the flips when there are two."""
    data: JSONObject = {
        "runs": [{"label": o["label"], "sims": sims} for _, (o, sims) in runs],
        "flips": flips(runs[0][0], runs[1][0]) if len(runs) == 2 else [],
    }
    return data
