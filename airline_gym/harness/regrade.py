"""Re-grade recorded tau2-bench airline runs and compare with their recorded rewards.

Every agent tool call of a recorded simulation is replayed, in order, through our tools on a
fresh database; the final database and the messages are then graded as tau2-bench does. A
replayed output that differs from the recorded tool message is reported, not fatal (spec 13.4).

Files are read with the results parser (:mod:`airline_gym.harness.results.io`): tau2-bench
results files (top-level ``tasks`` and ``simulations``) or a bare JSON list of simulations. A
malformed file is refused with one line naming the file and the field. Tasks come from the
file's embedded ``tasks`` first, else from ``tasks``, else the benchmark version's; ``tasks``
given for a file that embeds its own must agree with them on every task its simulations use
(else a one-line ``ConfigError``: it is never ignored without a word). The version
(tau2 or tau3) is the one the file's tasks are (recognised by content), else the one its info
records, else the one given (:func:`~airline_gym.domain.benchmarks.version_of`). An
``infrastructure_error`` (tau3: the simulation never ran to an end) has no reward and is not
graded. A simulation whose replay or grading raises is reported with its error (and counts as a
disagreement); the others go on. The command line is ``airline-gym regrade``
(:mod:`airline_gym.cli.regrade`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from airline_gym.domain.benchmarks import version_of
from airline_gym.domain.database import PristineDB
from airline_gym.domain.grading import INFRASTRUCTURE_ERROR
from airline_gym.domain.nl_assertions import Judge
from airline_gym.domain.task_checks import run_basis
from airline_gym.domain.tasks import Task
from airline_gym.errors import ConfigError
from airline_gym.harness.regrade_inputs import (
    load_checked,
    load_results,
    load_task_id_map,
    pristine_db,
    task_table,
)
from airline_gym.harness.regrade_result import RegradeResult, summary
from airline_gym.harness.replay import failed_result, regrade_simulation
from airline_gym.harness.results.comparability import canonical_task

__all__ = [
    "RegradeResult",
    "RegradeRun",
    "load_results",
    "load_task_id_map",
    "pristine_db",
    "regrade_file",
    "regrade_run",
    "regrade_simulation",
    "summary",
]


@dataclass
class RegradeRun:
    """The re-grades of one file and the benchmark version they were made under (and why)."""

    results: list[RegradeResult]
    benchmark: str
    how: str
    recorded_basis: tuple[str, ...] | None = None  # the run's own, as its info records it
    tasks: str = ""  # the tasks graded against: "the tasks it embeds", "task set 'B.json'", ...


def recorded_basis(info: Mapping[str, Any], source: str) -> tuple[str, ...] | None:
    """The reward basis a run was graded on, as ``eval`` records it (``info.reward_basis``);
    ``None`` when it records none (each task's own). A malformed one is a one-line error."""
    basis = info.get("reward_basis")
    if basis is None:
        return None
    if not isinstance(basis, list):
        raise ConfigError(f"{source}: info.reward_basis must be a list of components")
    return run_basis(basis, f"{source}: info.reward_basis")


def recorded_judge_model(info: Mapping[str, Any]) -> str | None:
    """The NL judge's model a run recorded (``info.judge_info.llm``), if any."""
    judge = info.get("judge_info")
    model = judge.get("llm") if isinstance(judge, Mapping) else None
    return model if isinstance(model, str) and model else None


def regrade_file(path: str | os.PathLike[str], **options: Any) -> list[RegradeResult]:
    """Re-grade every simulation of a results file: :func:`regrade_run`'s results (``options``
    are its keyword arguments)."""
    return regrade_run(path, **options).results


def regrade_run(
    path: str | os.PathLike[str],
    tasks: str | os.PathLike[str] | None = None,
    task_id_map: Mapping[str, str] | None = None,
    base: PristineDB | None = None,
    benchmark: str | None = None,
    reward_basis: tuple[str, ...] | None = None,
    judge: Judge | None = None,
    make_judge: Callable[[str | None], Judge] | None = None,
) -> RegradeRun:
    """Re-grade every simulation of a results file: on ``reward_basis`` when given, else on
    the basis the file records (``info.reward_basis``, as ``eval --reward-basis`` writes it),
    else on each task's own. Only a re-grade on the recorded basis is compared with the
    recorded reward; one on another basis is marked ``rebased``.

    A recorded basis with NL_ASSERTION and no ``judge``: ``make_judge(recorded judge model)``
    makes one (when given; else such simulations fail with the cause).

    Tasks: the file's embedded ones, else ``tasks`` (a tasks.json path), else the version's
    (the file's own when it tells, else ``benchmark``, else tau2). ``task_id_map`` overrides a
    simulation's ``task_id`` by simulation id. A result whose recorded action checks name
    another task's gold actions has that task in ``checks_task``.
    """
    run = load_checked(path)
    embedded, sims = run.tasks or None, run.simulations
    version, how = version_of(run.info, embedded, benchmark)
    id_map = task_id_map or {}
    by_id, source = task_table(path, embedded, tasks, version)
    if embedded is not None and tasks is not None:
        used = [str(id_map.get(str(s.get("id", "")), s.get("task_id"))) for s in sims]
        source = _same_tasks(path, by_id, tasks, version, used)
    recorded = recorded_basis(run.info, str(path))
    basis = recorded if reward_basis is None else reward_basis
    if judge is None and make_judge is not None and basis and "NL_ASSERTION" in basis:
        judge = make_judge(recorded_judge_model(run.info))
    base = pristine_db() if base is None else base
    owner = {a.action_id: t.id for t in by_id.values() for a in t.actions}
    results = []
    for sim in sims:
        sim_id = str(sim.get("id", ""))
        task_id = str(id_map.get(sim_id, sim.get("task_id")))
        if task_id not in by_id:
            raise ConfigError(f"{path}: simulation {sim_id!r}: no task {task_id!r} in {source}")
        if sim.get("termination_reason") == INFRASTRUCTURE_ERROR:
            results.append(failed_result(sim, task_id, None, str(path)))
            continue
        try:
            result = regrade_simulation(sim, by_id[task_id], base, basis, judge)
        except Exception as exc:
            result = failed_result(sim, task_id, exc, str(path))
        result.file = str(path)
        if reward_basis is not None:
            was = set(recorded or by_id[task_id].reward_basis)
            result.rebased = set(reward_basis) != was
        checks_task = _checks_owner(sim, owner)
        if checks_task is not None and checks_task != task_id:
            result.checks_task = checks_task
        results.append(result)
    return RegradeRun(results, version, how, recorded, source)


def _same_tasks(
    path: str | os.PathLike[str],
    embedded: Mapping[str, Task],
    tasks: str | os.PathLike[str],
    version: str,
    used: list[str],
) -> str:
    """Check ``tasks`` against the tasks a file embeds on the ones its simulations ``used``:
    they are the tasks the run was played on, so a ``--tasks`` that disagrees is refused in one
    line rather than ignored. Returns what the grades were made against."""
    given, _ = task_table(path, None, tasks, version)
    ids = [t for t in dict.fromkeys(used) if t in embedded]
    differ = [
        t
        for t in ids
        if t not in given or canonical_task(given[t].raw) != canonical_task(embedded[t].raw)
    ]
    if differ:
        shown = ", ".join(differ[:8]) + (f" and {len(differ) - 8} more" if len(differ) > 8 else "")
        raise ConfigError(
            f"{path} embeds the tasks it was run on, and {len(differ)} of the {len(ids)} its "
            f"simulations use differ from tasks file {tasks} ({shown}): its grades are made "
            "against the tasks it embeds; drop --tasks to grade against them (--tasks is for "
            "files without tasks of their own)"
        )
    return f"the tasks it embeds (the same as {tasks}'s)"


def _checks_owner(sim: Mapping[str, Any], owner: Mapping[str, str]) -> str | None:
    """The one task whose gold actions the recorded action checks name, if there is one."""
    info = sim.get("reward_info")
    checks = info.get("action_checks") if isinstance(info, Mapping) else None
    if not isinstance(checks, list):
        return None
    ids = [
        c["action"].get("action_id")
        for c in checks
        if isinstance(c, Mapping) and isinstance(c.get("action"), Mapping)
    ]
    owners = {owner.get(i) if isinstance(i, str) else None for i in ids}
    return owners.pop() if len(owners) == 1 else None
