"""The policy solver against the benchmark: for each task with a hand-written intent, does the
solver's gold lead to the task's gold DB, and does it say the task's numbers?

``python -m airline_gym.taskgen.validate`` prints the table (τ³'s tasks; τ²'s gold beside it).

A row agrees when replaying the solver's writes on the pristine DB gives the gold replay's DB
(the reference's hash) and the solver says exactly the task's ``communicate_info``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import NoReturn

from airline_gym.domain.database import PristineDB, load_pristine, same_db
from airline_gym.domain.grading import gold_db
from airline_gym.domain.tasks import Task, load_task_set
from airline_gym.errors import AirlineGymError
from airline_gym.taskgen.benchmark_intents import benchmark_intent
from airline_gym.taskgen.solver import apply, solve

__all__ = ["Row", "main", "rows", "table"]


@dataclass(frozen=True)
class Row:
    """One benchmark task: its kinds, and whether the solver matches τ³'s and τ²'s gold."""

    task_id: str
    kinds: tuple[str, ...]
    outcomes: tuple[str, ...]
    agrees: bool
    db_same: bool
    said_same: bool
    tau2_agrees: bool


def _matches(
    base: PristineDB, task: Task, writes: tuple, say: tuple[str, ...]
) -> tuple[bool, bool]:
    replay = base.fork()
    apply(replay, writes)
    return same_db(replay, gold_db(task, base)), sorted(say) == sorted(task.communicate_info)


def rows(base: PristineDB | None = None) -> list[Row]:
    """One row per τ³ task that has an intent, in id order."""
    base = base or load_pristine()
    tau3, tau2 = load_task_set("tau3"), load_task_set("tau2")
    out = []
    for task in tau3:
        intent = benchmark_intent(task.id, "tau3")
        if intent is None:
            continue
        solution = solve(base, intent)
        db_same, said_same = _matches(base, task, solution.writes, solution.say)
        db2, said2 = _matches(base, tau2[task.id], solution.writes, solution.say)
        out.append(
            Row(
                task.id,
                intent.kinds,
                tuple(d.outcome for d in solution.decisions),
                db_same and said_same,
                db_same,
                said_same,
                db2 and said2,
            )
        )
    return out


def table(found: list[Row]) -> str:
    """The rows as a Markdown table, with the totals first."""
    agree = [r for r in found if r.agrees]
    lines = [
        f"expressed {len(found)} of 50 tau3 tasks; agree {len(agree)}; "
        f"disagree {len(found) - len(agree)}",
        f"tau2 gold: agree {sum(r.tau2_agrees for r in found)} (solver agrees with tau3 but not "
        f"tau2 on: {' '.join(r.task_id for r in found if r.agrees and not r.tau2_agrees) or '-'})",
        "",
        "| task | kinds | solver's outcomes | tau3 DB | tau3 said | tau2 |",
        "|---|---|---|---|---|---|",
    ]
    for r in found:
        mark = "same" if r.db_same else "DIFFERS"
        said = "same" if r.said_same else "DIFFERS"
        tau2 = "agrees" if r.tau2_agrees else "differs"
        cells = [r.task_id, " ".join(r.kinds), " ".join(r.outcomes), mark, said, tau2]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """Print the table; a bad argument is one line and exit 2, a failure one line and exit 1."""
    parser = _Parser(prog="python -m airline_gym.taskgen.validate", description=__doc__)
    parser.parse_args(argv)
    try:
        print(table(rows()))
    except AirlineGymError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
