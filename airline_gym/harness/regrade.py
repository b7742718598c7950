"""Re-grade recorded tau2-bench airline runs and compare with their recorded rewards.

Every agent tool call of a recorded simulation is replayed, in order, through our tools on a
fresh database; the final database and the messages are then graded as tau2-bench does. A
replayed output that differs from the recorded tool message is reported, not fatal (spec 13.4).

Accepts tau2-bench results files (top-level ``tasks`` and ``simulations``) or a bare JSON list of
simulations. Tasks come from the file's embedded ``tasks`` first, else from --tasks.

Exit code: 0 when every simulation agrees with its recorded reward, 1 when some disagree,
2 on bad arguments or unreadable input.

Examples:

  airline-gym regrade results.json
  airline-gym regrade runs/*.json --json > regraded.jsonl
  airline-gym regrade tau3_run.json --tasks path/to/tau3/tasks.json
  airline-gym regrade toolorchestra.json --task-id-map task_id_fix.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.data import DataError
from airline_gym.domain.database import PristineDB, load_pristine
from airline_gym.domain.grading import Grade, grade
from airline_gym.domain.tasks import DEFAULT_TASK_SET, Task, load_task_set, parse_tasks
from airline_gym.domain.toolbox import execute
from airline_gym.domain.transcript import CallRecord, tool_calls
from airline_gym.errors import ConfigError, MissingFileError

__all__ = [
    "RegradeResult",
    "add_arguments",
    "load_results",
    "load_task_id_map",
    "regrade_file",
    "regrade_simulation",
    "run",
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
    grade: Grade = field(repr=False)
    file: str = ""

    def agrees(self) -> bool:
        """Whether our reward equals the recorded one (vacuously true when none was recorded)."""
        return self.recorded_reward is None or abs(self.reward - self.recorded_reward) < 1e-9

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready summary record (mismatches counted, diffs as text)."""
        return {
            "file": self.file,
            "simulation_id": self.simulation_id,
            "task_id": self.task_id,
            "trial": self.trial,
            "recorded_reward": self.recorded_reward,
            "reward": self.reward,
            "agrees": self.agrees(),
            "db_match": self.db_match,
            "communicate_reward": self.grade.communicate_reward,
            "termination_reason": self.termination_reason,
            "output_mismatches": len(self.output_mismatches),
            "db_diff": [str(d) for d in self.grade.db_diff],
            "note": self.grade.note,
        }


# --- loading ---------------------------------------------------------------------------------
def _read_json(path: str | os.PathLike[str]) -> Any:
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            raise ConfigError(f"{path}: not valid JSON ({exc})") from None


def load_results(path: str | os.PathLike[str]) -> tuple[list[JSONObject] | None, list[JSONObject]]:
    """(embedded tasks or ``None``, simulations) of a results file or a bare list of simulations."""
    data = _read_json(path)
    if isinstance(data, list):
        tasks, sims = None, data
    elif isinstance(data, dict) and isinstance(data.get("simulations"), list):
        tasks, sims = data.get("tasks") or None, data["simulations"]
    else:
        raise ConfigError(f"{path}: not a results file (expected 'simulations' or a JSON list)")
    if not all(isinstance(s, dict) and "messages" in s for s in sims):
        raise ConfigError(f"{path}: every simulation must be an object with 'messages'")
    return tasks, sims


def load_task_id_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """Simulation id -> real task id, from a flat JSON object or a ``by_simulation_id`` fix file.

    The fix file maps each id to ``{"recovered_task_id": ...}`` (or ``{"task_id": ...}``).
    """
    data = _read_json(path)
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


# --- replay and grading ----------------------------------------------------------------------
def _as_json(content: Any) -> Any:
    """A tool output parsed as JSON when possible, else as is."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
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


def regrade_simulation(
    sim: Mapping[str, Any], task: Task, base: PristineDB | None = None
) -> RegradeResult:
    """Replay ``sim``'s agent tool calls on a fresh database and grade it against ``task``."""
    base = load_pristine() if base is None else base
    messages = list(sim["messages"])
    calls = [c for c in tool_calls(messages) if c.requestor == _AGENT]
    db = base.fork()
    mismatches: list[dict[str, Any]] = []
    for call, answer in zip(calls, _recorded_outputs(messages, calls), strict=True):
        replayed = execute(db, call.name, call.arguments).content
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
    result = grade(task, db, messages, termination)
    reward_info = sim.get("reward_info") or {}
    recorded_reward = reward_info.get("reward") if isinstance(reward_info, Mapping) else None
    trial = sim.get("trial")
    return RegradeResult(
        simulation_id=str(sim.get("id", "")),
        task_id=task.id,
        trial=trial if isinstance(trial, int) else None,
        recorded_reward=None if recorded_reward is None else float(recorded_reward),
        reward=result.reward,
        db_match=result.db_match,
        termination_reason=termination,
        output_mismatches=mismatches,
        grade=result,
    )


def regrade_file(
    path: str | os.PathLike[str],
    tasks: str | os.PathLike[str] | None = None,
    task_id_map: Mapping[str, str] | None = None,
    base: PristineDB | None = None,
) -> list[RegradeResult]:
    """Re-grade every simulation of a results file.

    Tasks: the file's embedded ones, else ``tasks`` (a task-set name or path, default tau2).
    ``task_id_map`` overrides a simulation's ``task_id`` by simulation id.
    """
    embedded, sims = load_results(path)
    if embedded is not None:
        by_id, source = parse_tasks(embedded), f"the tasks embedded in {path}"
    else:
        task_set = load_task_set(DEFAULT_TASK_SET if tasks is None else tasks)
        by_id, source = task_set.tasks, f"task set {task_set.name!r}"
    base = load_pristine() if base is None else base
    id_map = task_id_map or {}
    results = []
    for sim in sims:
        sim_id = str(sim.get("id", ""))
        task_id = str(id_map.get(sim_id, sim.get("task_id")))
        if task_id not in by_id:
            raise ConfigError(f"simulation {sim_id!r}: no task {task_id!r} in {source}")
        result = regrade_simulation(sim, by_id[task_id], base)
        result.file = str(path)
        results.append(result)
    return results


# --- command line ----------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``regrade`` subcommand's arguments."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="results files to re-grade")
    parser.add_argument(
        "--tasks",
        default=None,
        help="task set for files without embedded tasks (embedded tasks win): "
        "'tau2' (default) or a tasks.json path",
    )
    parser.add_argument(
        "--task-id-map",
        default=None,
        metavar="FILE",
        help="JSON mapping simulation id -> real task id (flat, or a 'by_simulation_id' fix file)",
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per simulation instead of a table"
    )


def _fmt_reward(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _rows(results: list[RegradeResult]) -> list[tuple[str, ...]]:
    return [
        (
            r.simulation_id,
            r.task_id,
            _fmt_reward(r.recorded_reward),
            _fmt_reward(r.reward),
            "yes" if r.agrees() else "NO",
            "yes" if r.db_match else "no",
            r.termination_reason,
            str(len(r.output_mismatches)),
        )
        for r in results
    ]


_HEADERS = ("simulation", "task", "recorded", "ours", "agree", "db", "termination", "mismatches")


def _print_table(title: str, results: list[RegradeResult]) -> None:
    """A rich table when rich is installed, else aligned plain text."""
    rows = _rows(results)
    try:
        from rich import box
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(_HEADERS)]
        print(title)
        for row in (_HEADERS, *rows):
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        print()
        return
    console = Console()
    if not console.is_terminal:  # piped: do not squeeze the table into 80 columns
        console = Console(width=200)
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for header in _HEADERS:
        table.add_column(
            header,
            justify="right" if header in ("recorded", "ours", "mismatches") else "left",
            no_wrap=True,
            min_width=len(header),
        )
    for row in rows:
        table.add_row(*row, style=None if row[4] == "yes" else "bold red")
    console.print(table)


_SHOWN = 10  # disagreements named in the summary line


def summary(results: Iterable[RegradeResult]) -> str:
    """``agreement: A/N simulations`` plus the disagreeing ones."""
    results = list(results)
    bad = [r for r in results if not r.agrees()]
    text = f"agreement: {len(results) - len(bad)}/{len(results)} simulations"
    unrecorded = sum(r.recorded_reward is None for r in results)
    if unrecorded:
        text += f" ({unrecorded} without a recorded reward)"
    if bad:
        shown = ", ".join(
            f"{Path(r.file).name}:{r.simulation_id} (task {r.task_id}, recorded "
            f"{_fmt_reward(r.recorded_reward)}, ours {_fmt_reward(r.reward)})"
            for r in bad[:_SHOWN]
        )
        more = f", and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
        text += f" ({len(bad)} disagree: {shown}{more})"
    return text


def run(args: argparse.Namespace) -> int:
    """Re-grade the files; exit 0 if all agree, 1 if some disagree, 2 on bad input."""
    prog = "airline-gym regrade"
    try:
        missing = [f for f in args.files if not Path(f).is_file()]
        if missing:
            raise MissingFileError(f"no such file: {', '.join(missing)}")
        id_map = load_task_id_map(args.task_id_map) if args.task_id_map else None
        per_file = [(f, regrade_file(f, tasks=args.tasks, task_id_map=id_map)) for f in args.files]
    except (OSError, ValueError, KeyError, DataError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    everything: list[RegradeResult] = []
    for name, results in per_file:
        everything.extend(results)
        if args.json:
            for r in results:
                print(json.dumps(r.to_dict()))
        else:
            _print_table(name, results)
    sys.stdout.flush()
    print(summary(everything), file=sys.stderr)
    return 0 if all(r.agrees() for r in everything) else 1
