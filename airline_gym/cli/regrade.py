"""Re-grade recorded tau2-bench airline runs and compare with their recorded rewards.

Every agent tool call of a recorded simulation is replayed, in order, through our tools on a
fresh database; the final database and the messages are then graded as tau2-bench does. A
replayed output that differs from the recorded tool message is reported, not fatal (spec 13.4).

Accepts tau2-bench results files (top-level ``tasks`` and ``simulations``) or a bare JSON list of
simulations. Tasks come from the file's embedded ``tasks`` first, else from --tasks, else the
benchmark version's. --tasks given for a file that embeds its own is checked against them: the
file's tasks are the ones its run was played on, so tasks that differ on any task its
simulations use are refused (one line, exit 2), and the same ones are said to be used. The
version (tau2 or tau3) is the one the file's tasks are, recognised by their content, else the
one its info records, else --benchmark, else tau2; which one was used, and why, is said for
each file (for one that does not tell, only when some simulation disagrees). An
infrastructure_error (tau3) has no reward and is not graded.

A simulation whose replay fails is listed with its error and the others go on. When the
recorded action checks of some simulations belong to other tasks than their task ids say, a
hint names --task-id-map.

Exit code: 0 when every simulation agrees with its recorded reward, 1 when some disagree
(or could not be replayed), 2 on bad arguments or unreadable input (one line, nothing else).

Examples:

  airline-gym regrade results.json
  airline-gym regrade runs/*.json --json > regraded.jsonl
  airline-gym regrade tau3_run.json --benchmark tau3
  airline-gym regrade toolorchestra.json --task-id-map task_id_fix.json
  airline-gym regrade results.json --reward-basis DB,COMMUNICATE,ACTION

Each file is graded on the reward basis it records (info.reward_basis, as 'eval
--reward-basis' writes it), else on each task's own, and compared with the recorded rewards.
With --reward-basis on another basis than the recorded one, rewards are computed on that basis
instead: they are then not compared with the recorded ones (no agreement is claimed; exit 1
only for simulations that could not be replayed or judged). NL_ASSERTION asks an LLM judge
(--judge-model, default the model the file records, --judge-api-base). A judge that fails is
marked "judge failed", and one the file records as failed (reward_info.info.nl.error)
"judge failed (recorded)": neither is a disagreement.

--summary prints only the summary lines (no row per simulation).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from airline_gym.cli.options import add_reward_basis_arguments, judge_from_args, reward_bases
from airline_gym.data import DataError
from airline_gym.domain.benchmarks import BENCHMARKS, DEFAULT_HOW
from airline_gym.errors import MissingFileError
from airline_gym.harness.regrade import (
    RegradeResult,
    RegradeRun,
    load_task_id_map,
    regrade_run,
    summary,
)
from airline_gym.printable import printable

__all__ = ["add_arguments", "run"]


def _fmt_reward(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``regrade`` subcommand's arguments."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="results files to re-grade")
    parser.add_argument(
        "--benchmark",
        choices=BENCHMARKS,
        default=None,
        help="benchmark version of files that do not tell by their tasks or info (default tau2)",
    )
    parser.add_argument(
        "--tasks",
        default=None,
        metavar="PATH",
        help="a tasks.json for files without embedded tasks (a file's embedded tasks are used, "
        "and --tasks that differ from them is refused; default: the benchmark version's tasks)",
    )
    parser.add_argument(
        "--task-id-map",
        default=None,
        metavar="FILE",
        help="JSON mapping simulation id -> real task id (flat, or a 'by_simulation_id' fix file)",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--json", action="store_true", help="one JSON object per simulation instead of a table"
    )
    shown.add_argument(
        "--summary",
        action="store_true",
        help="only the summary lines on stderr: no row per simulation",
    )
    add_reward_basis_arguments(parser)


_AGREE = {
    "agree": "yes",
    "unrecorded": "yes",
    "disagree": "NO",
    "error": "NO",
    "judge_error": "judge failed",
    "recorded_judge_error": "judge failed (recorded)",
    "other_basis": "-",
}


def _ours(r: RegradeResult) -> str:
    if r.error:
        return "error"
    if r.grade is None:
        return "-"
    return "judge error" if r.judge_error else _fmt_reward(r.reward)


def _rows(results: list[RegradeResult]) -> list[tuple[str, ...]]:
    return [
        (
            printable(r.simulation_id),
            printable(r.task_id),
            "judge error" if r.recorded_judge_error else _fmt_reward(r.recorded_reward),
            _ours(r),
            _AGREE[r.status()],
            "yes" if r.db_match else "no",
            printable(r.termination_reason),
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
        from rich.text import Text
    except ImportError:
        widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(_HEADERS)]
        print(printable(title))
        for row in (_HEADERS, *rows):
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        print()
        return
    console = Console()
    if not console.is_terminal:  # piped: do not squeeze the table into 80 columns
        console = Console(width=200)
    table = Table(title=Text(printable(title)), title_justify="left", box=box.SIMPLE_HEAD)
    for header in _HEADERS:
        table.add_column(
            header,
            justify="right" if header in ("recorded", "ours", "mismatches") else "left",
            no_wrap=True,
            min_width=len(header),
        )
    for row in rows:
        cells = [Text(cell) for cell in row]  # plain text: no rich markup read in a task id
        table.add_row(*cells, style=None if row[4] in ("yes", "-") else "bold red")
    console.print(table)


def _hint(name: str, results: list[RegradeResult]) -> str | None:
    """A hint when recorded action checks name other tasks than the simulations' task ids."""
    off = [r for r in results if r.checks_task is not None]
    if not off:
        return None
    first = off[0]
    return (
        f"hint: in {name}, {len(off)} of {len(results)} simulations have recorded action checks "
        f"of another task (e.g. {first.simulation_id} is labelled task {first.task_id} but its "
        f"checks are task {first.checks_task}'s): the file's task ids look wrong; pass "
        "--task-id-map FILE (JSON: simulation id -> real task id)"
    )


def _version_line(name: str, run: RegradeRun) -> str | None:
    """Which benchmark version a file was graded under, and why; nothing for the silent default
    (a file that does not tell, no --benchmark) unless some of its simulations disagree."""
    basis = (
        f"; graded on its recorded reward basis {','.join(run.recorded_basis)}"
        if run.recorded_basis and not any(r.rebased for r in run.results)
        else ""
    )
    if run.how == DEFAULT_HOW:
        if all(r.status() != "disagree" for r in run.results):
            return f"{name}: {basis[2:]}" if basis else None
        return (
            f"{name}: benchmark {run.benchmark} ({run.how}); if it is a tau3 run, pass "
            f"--benchmark tau3{basis}"
        )
    return f"{name}: benchmark {run.benchmark} ({run.how}){basis}"


def _one_line(exc: BaseException) -> str:
    message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    return " ".join(str(message).split()) or type(exc).__name__


def _recorded_judge(args: argparse.Namespace, model: str | None) -> Any:
    """The judge of a file whose recorded basis has NL_ASSERTION: --judge-model, else the model
    the file records, else the reference's."""
    if model and not getattr(args, "judge_model", None):
        args = argparse.Namespace(**{**vars(args), "judge_model": model})
    return judge_from_args(args, [("NL_ASSERTION",)])


def run(args: argparse.Namespace) -> int:
    """Re-grade the files; exit 0 if all agree, 1 if some disagree, 2 on bad input."""
    prog = "airline-gym regrade"
    try:
        missing = [f for f in args.files if not Path(f).is_file()]
        if missing:
            raise MissingFileError(f"no such file: {', '.join(missing)}")
        id_map = load_task_id_map(args.task_id_map) if args.task_id_map else None
        bases = reward_bases(args)
        basis = bases[0] if bases else None
        judge = judge_from_args(args, bases)
        per_file = [
            (
                f,
                regrade_run(
                    f,
                    args.tasks,
                    id_map,
                    benchmark=getattr(args, "benchmark", None),
                    reward_basis=basis,
                    judge=judge,
                    make_judge=lambda model: _recorded_judge(args, model),
                ),
            )
            for f in args.files
        ]
    except (OSError, ValueError, KeyError, DataError) as exc:
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    everything: list[RegradeResult] = []
    hints = []
    versions: list[str | None] = []
    for name, run in per_file:
        results = run.results
        versions.append(_version_line(name, run))
        everything.extend(results)
        if args.json:
            for r in results:
                print(json.dumps({**r.to_dict(), "benchmark": run.benchmark}))
        elif not getattr(args, "summary", False):
            _print_table(name, results)
        hint = None if id_map else _hint(name, results)
        if hint:
            hints.append(hint)
    sys.stdout.flush()
    for line in versions:
        if line:
            print(line, file=sys.stderr)
    if args.tasks is not None:  # which tasks were used: the file's own, or --tasks
        for name, run in per_file:
            print(f"{name}: graded against {run.tasks}", file=sys.stderr)
    failed = Counter(r.error for r in everything if r.error)
    for error, count in failed.most_common(3):
        print(f"{prog}: {count} simulation(s) could not be replayed: {error}", file=sys.stderr)
    for hint in hints:
        print(hint, file=sys.stderr)
    print(summary(everything), file=sys.stderr)
    return 0 if all(r.agrees() for r in everything) else 1
