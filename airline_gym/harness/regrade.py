"""Re-grade recorded tau2-bench airline runs and compare with their recorded rewards.

Every agent tool call of a recorded simulation is replayed, in order, through our tools on a
fresh database; the final database and the messages are then graded as tau2-bench does. A
replayed output that differs from the recorded tool message is reported, not fatal (spec 13.4).

Files are read with the results parser (:mod:`airline_gym.harness.results.io`): tau2-bench
results files (top-level ``tasks`` and ``simulations``) or a bare JSON list of simulations. A
malformed file is refused with one line naming the file and the field. Tasks come from the
file's embedded ``tasks`` first, else from ``tasks``, else the benchmark version's. The version
(tau2 or tau3) is the one the file's tasks are (recognised by content), else the one its info
records, else the one given (:func:`~airline_gym.domain.benchmarks.version_of`). An
``infrastructure_error`` (tau3: the simulation never ran to an end) has no reward and is not
graded. A simulation whose replay or grading raises is reported with its error (and counts as a
disagreement); the others go on. The command line is ``airline-gym regrade``
(:mod:`airline_gym.cli.regrade`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.domain.benchmarks import benchmark_tasks, version_of
from airline_gym.domain.database import PristineDB, load_pristine
from airline_gym.domain.grading import INFRASTRUCTURE_ERROR, Grade, grade_with_judge
from airline_gym.domain.nl_assertions import Judge
from airline_gym.domain.tasks import Task, load_task_set, parse_tasks
from airline_gym.domain.toolbox import execute
from airline_gym.domain.transcript import CallRecord, tool_calls
from airline_gym.errors import ConfigError, DataError
from airline_gym.harness.results import Results, read_json
from airline_gym.harness.results.io import check_task

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

_AGENT = "assistant"
JSONObject = dict[str, Any]


@dataclass
class RegradeResult:
    """Our grade of one recorded simulation next to the reward recorded with it."""

    simulation_id: str
    task_id: str
    trial: int | None
    recorded_reward: float | None
    reward: float
    db_match: bool
    termination_reason: str
    output_mismatches: list[dict[str, Any]]  # {index, call_id, name, recorded, replayed}
    grade: Grade | None = field(repr=False)
    file: str = ""
    error: str | None = None  # the replay or grading raised: this is why
    checks_task: str | None = None  # the recorded action checks are this other task's
    reward_basis: tuple[str, ...] | None = None  # graded on this basis (None: the task's own)

    def agrees(self) -> bool:
        """Whether our reward equals the recorded one (vacuously true when none was recorded,
        or when graded on another basis than the task's own: then only errors disagree)."""
        if self.error is not None or (self.grade is not None and self.grade.judge_error):
            return False
        if self.reward_basis is not None or self.recorded_reward is None:
            return True
        return abs(self.reward - self.recorded_reward) < 1e-9

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready summary record (mismatches counted, diffs as text)."""
        g = self.grade
        return {
            "file": self.file,
            "simulation_id": self.simulation_id,
            "task_id": self.task_id,
            "trial": self.trial,
            "recorded_reward": self.recorded_reward,
            "reward": self.reward,
            "agrees": self.agrees(),
            "db_match": self.db_match,
            "communicate_reward": None if g is None else g.communicate_reward,
            "termination_reason": self.termination_reason,
            "output_mismatches": len(self.output_mismatches),
            "db_diff": [] if g is None else [str(d) for d in g.db_diff],
            "note": "" if g is None else g.note,
            "error": self.error,
            "reward_basis": None if self.reward_basis is None else list(self.reward_basis),
            "action_reward": None if g is None else g.action_reward,
            "nl_assertions": None
            if g is None or g.nl_assertions is None
            else [dataclasses.asdict(c) for c in g.nl_assertions],
        }


# --- loading ---------------------------------------------------------------------------------
def load_results(path: str | os.PathLike[str]) -> tuple[list[JSONObject] | None, list[JSONObject]]:
    """(embedded tasks or ``None``, simulations) of a results file or a bare list of simulations."""
    results = _load_checked(path)
    return results.tasks or None, results.simulations


def _load_checked(path: str | os.PathLike[str]) -> Results:
    results = Results.load(path, need_messages=True)
    for i, raw in enumerate(results.tasks):
        check_task(raw, f"{path}: task {i}")
    return results


def load_task_id_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """Simulation id -> real task id, from a flat JSON object or a ``by_simulation_id`` fix file.

    The fix file maps each id to ``{"recovered_task_id": ...}`` (or ``{"task_id": ...}``).
    """
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("by_simulation_id"), dict):
        data = data["by_simulation_id"]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object mapping simulation id to task id")
    out: dict[str, str] = {}
    for sim_id, value in data.items():
        if isinstance(value, Mapping):
            value = value.get("recovered_task_id", value.get("task_id"))
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ConfigError(f"{path}: no task id for simulation {sim_id!r}")
        out[str(sim_id)] = str(value)
    return out


def _task_table(
    path: str | os.PathLike[str], embedded: list[JSONObject] | None, tasks: Any, benchmark: str
) -> tuple[Mapping[str, Task], str]:
    """(tasks by id, where they come from): the embedded tasks, else ``tasks``, else the
    benchmark's."""
    if embedded is not None:
        return parse_tasks(embedded), f"the tasks embedded in {path}"
    name = benchmark_tasks(tasks, benchmark)
    try:
        task_set = load_task_set(name)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{name}: not valid JSON ({exc})") from None
    except (OSError, ValueError) as exc:
        text = str(exc)
        raise ConfigError(text if str(name) in text else f"{name}: {text}") from None
    except (TypeError, KeyError, AttributeError, RecursionError) as exc:
        raise ConfigError(f"{name}: not a tasks file ({type(exc).__name__}: {exc})") from None
    for i, task in enumerate(task_set):
        check_task(task.raw, f"{name}: task {i}")
    return task_set.tasks, f"task set {task_set.name!r}"


def pristine_db() -> PristineDB:
    """The configured pristine DB; an unreadable db.json is a one-line error naming it."""
    try:
        return load_pristine()
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        from airline_gym.data import data_files

        raise DataError(f"{data_files().db}: not a readable airline DB ({exc})") from None


# --- replay and grading ----------------------------------------------------------------------
def _as_json(content: Any) -> Any:
    """A tool output parsed as JSON when possible, else as is."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except (ValueError, RecursionError):
            return content
    return content


def _recorded_outputs(messages: list[Any], calls: list[CallRecord]) -> list[tuple[int, Any] | None]:
    """Per call, (message index, content) of the tool message answering it, or ``None``.

    A call is answered by the first unused later tool message with its id.
    """
    answers: dict[str, deque[int]] = {}
    for index, message in enumerate(messages):
        if isinstance(message, Mapping) and message.get("role") == "tool":
            call_id = str(message.get("id") or message.get("tool_call_id") or "")
            answers.setdefault(call_id, deque()).append(index)
    out: list[tuple[int, Any] | None] = []
    for call in calls:
        queue = answers.get(call.id)
        while queue and queue[0] <= call.message_index:
            queue.popleft()
        out.append((queue[0], messages[queue.popleft()].get("content")) if queue else None)
    return out


def _replay(db: Any, call: CallRecord) -> str:
    try:
        return execute(db, call.name, call.arguments).content
    except Exception as exc:  # a bug of ours on hostile arguments: report it, go on
        return f"Error: replay raised {type(exc).__name__}: {str(exc)[:300]}"


def regrade_simulation(
    sim: Mapping[str, Any],
    task: Task,
    base: PristineDB | None = None,
    reward_basis: tuple[str, ...] | None = None,
    judge: Judge | None = None,
) -> RegradeResult:
    """Replay ``sim``'s agent tool calls on a fresh database and grade it against ``task``
    (on ``reward_basis`` when given, asking ``judge`` when it has ``NL_ASSERTION``)."""
    base = pristine_db() if base is None else base
    messages = list(sim["messages"])
    calls = [c for c in tool_calls(messages) if c.requestor == _AGENT]
    db = base.fork()
    mismatches: list[dict[str, Any]] = []
    for call, answer in zip(calls, _recorded_outputs(messages, calls), strict=True):
        replayed = _replay(db, call)
        index, content = answer or (call.message_index, None)
        if _as_json(content) != _as_json(replayed):
            mismatches.append(
                {
                    "index": index,
                    "call_id": call.id,
                    "name": call.name,
                    "recorded": content,
                    "replayed": replayed,
                }
            )
    termination = str(sim.get("termination_reason") or "")
    result = grade_with_judge(task, db, messages, termination, reward_basis, judge)
    return RegradeResult(
        simulation_id=str(sim.get("id", "")),
        task_id=task.id,
        trial=_trial(sim),
        recorded_reward=_recorded_reward(sim),
        reward=result.reward,
        db_match=result.db_match,
        termination_reason=termination,
        output_mismatches=mismatches,
        grade=result,
        reward_basis=reward_basis,
    )


def _trial(sim: Mapping[str, Any]) -> int | None:
    trial = sim.get("trial")
    return trial if isinstance(trial, int) and not isinstance(trial, bool) else None


def _recorded_reward(sim: Mapping[str, Any]) -> float | None:
    info = sim.get("reward_info")
    reward = info.get("reward") if isinstance(info, Mapping) else None
    return None if reward is None else float(reward)


def _failed(
    sim: Mapping[str, Any], task_id: str, exc: Exception | None, file: str
) -> RegradeResult:
    """What is left of a simulation without a grade: one whose replay or grading raised
    (``exc``), or an ``infrastructure_error`` (nothing to grade, no reward to check)."""
    return RegradeResult(
        file=file,
        simulation_id=str(sim.get("id", "")),
        task_id=task_id,
        trial=_trial(sim),
        recorded_reward=_recorded_reward(sim),
        reward=0.0,
        db_match=False,
        termination_reason=str(sim.get("termination_reason") or ""),
        output_mismatches=[],
        grade=None,
        error=None if exc is None else f"{type(exc).__name__}: {str(exc)[:300]}",
    )


@dataclass
class RegradeRun:
    """The re-grades of one file and the benchmark version they were made under (and why)."""

    results: list[RegradeResult]
    benchmark: str
    how: str


def regrade_file(
    path: str | os.PathLike[str],
    tasks: str | os.PathLike[str] | None = None,
    task_id_map: Mapping[str, str] | None = None,
    base: PristineDB | None = None,
    benchmark: str | None = None,
    reward_basis: tuple[str, ...] | None = None,
    judge: Judge | None = None,
) -> list[RegradeResult]:
    """Re-grade every simulation of a results file (see :func:`regrade_run`)."""
    return regrade_run(path, tasks, task_id_map, base, benchmark, reward_basis, judge).results


def regrade_run(
    path: str | os.PathLike[str],
    tasks: str | os.PathLike[str] | None = None,
    task_id_map: Mapping[str, str] | None = None,
    base: PristineDB | None = None,
    benchmark: str | None = None,
    reward_basis: tuple[str, ...] | None = None,
    judge: Judge | None = None,
) -> RegradeRun:
    """Re-grade every simulation of a results file (on ``reward_basis`` when given).

    Tasks: the file's embedded ones, else ``tasks`` (a tasks.json path), else the version's
    (the file's own when it tells, else ``benchmark``, else tau2). ``task_id_map`` overrides a
    simulation's ``task_id`` by simulation id. A result whose recorded action checks name
    another task's gold actions has that task in ``checks_task``.
    """
    run = _load_checked(path)
    embedded, sims = run.tasks or None, run.simulations
    version, how = version_of(run.info, embedded, benchmark)
    by_id, source = _task_table(path, embedded, tasks, version)
    base = pristine_db() if base is None else base
    id_map = task_id_map or {}
    owner = {a.action_id: t.id for t in by_id.values() for a in t.actions}
    results = []
    for sim in sims:
        sim_id = str(sim.get("id", ""))
        task_id = str(id_map.get(sim_id, sim.get("task_id")))
        if task_id not in by_id:
            raise ConfigError(f"{path}: simulation {sim_id!r}: no task {task_id!r} in {source}")
        if sim.get("termination_reason") == INFRASTRUCTURE_ERROR:
            results.append(_failed(sim, task_id, None, str(path)))
            continue
        try:
            result = regrade_simulation(sim, by_id[task_id], base, reward_basis, judge)
        except Exception as exc:
            result = _failed(sim, task_id, exc, str(path))
        result.file = str(path)
        checks_task = _checks_owner(sim, owner)
        if checks_task is not None and checks_task != task_id:
            result.checks_task = checks_task
        results.append(result)
    return RegradeRun(results, version, how)


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


_SHOWN = 10  # disagreements named in the summary line


def _fmt_reward(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def summary(results: Iterable[RegradeResult]) -> str:
    """``agreement: A/N simulations`` plus the disagreeing ones."""
    results = list(results)
    bad = [r for r in results if not r.agrees()]
    text = f"agreement: {len(results) - len(bad)}/{len(results)} simulations"
    failed = sum(r.termination_reason == INFRASTRUCTURE_ERROR for r in results)
    unrecorded = sum(r.recorded_reward is None for r in results) - failed
    if unrecorded:
        text += f" ({unrecorded} without a recorded reward)"
    if failed:
        text += f" ({failed} infrastructure_error, not graded: no reward)"
    if bad:
        shown = ", ".join(
            f"{Path(r.file).name}:{r.simulation_id} (task {r.task_id}, "
            + (
                f"error {r.error}"
                if r.error
                else f"recorded {_fmt_reward(r.recorded_reward)}, ours {_fmt_reward(r.reward)}"
            )
            + ")"
            for r in bad[:_SHOWN]
        )
        more = f", and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
        text += f" ({len(bad)} disagree: {shown}{more})"
    return text
