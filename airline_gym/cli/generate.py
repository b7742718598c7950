"""Generate training tasks that are not the test set: a tasks.json in tau2's format.

Intents are sampled from the DB (every kind of request in the 50 tasks, alone and in
combinations of 2-3), the policy solver decides each, and the tasks keep the wanted mix of kinds
and outcomes. Same seed and data: a byte-identical file. Users and reservations any tau2 or tau3
task names are left out unless --allow-benchmark-entities.

Grading: 'strict' (default) puts the lookups a refusal depends on in the gold and ACTION in the
task's reward basis, so doing nothing scores 0; 'benchmark' grades as the 50 tasks do
(DB x COMMUNICATE, writes only).

The file is written as the tasks are made (progress on stderr) and replaces --out only once it
is whole. Every other command reads a tasks file of at most 64 MiB ($AIRLINE_GYM_MAX_FILE_MB
raises it), about 14,000 tasks: a larger --n is refused, at once when it cannot fit and as soon
as the tasks made so far show it will not.

  airline-gym generate --n 500 --seed 1 --out tasks.json
  airline-gym generate --n 200 --seed 2 --kinds cancel,change_flights --out cancel.json
  airline-gym generate --n 100 --seed 3 --grading benchmark --out bench-graded.json
  airline-gym generate --n 1000 --seed 4 --pools --out tasks.json   # each pool's width
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airline_gym.data.limits import ENV_MAX_FILE_MB, TASKS_MAX_BYTES, effective_limit, size_text
from airline_gym.data.output import OutputFile, data_inputs
from airline_gym.errors import ConfigError
from airline_gym.progress import Progress
from airline_gym.taskgen.output import TasksText

if TYPE_CHECKING:
    from airline_gym.taskgen.generate import PoolUse


#: The most tasks one run makes, whatever the size limit.
MAX_TASKS = 1_000_000
#: Fewer bytes than the smallest generated task takes in a file (measured: 2,754 of 2,000).
MIN_TASK_BYTES = 2048
#: Tasks made before the file's final size is first estimated from them (then at every tenth).
ESTIMATE_AFTER = 500


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym generate``."""
    parser.add_argument("--n", type=int, required=True, help="how many tasks")
    parser.add_argument("--seed", type=int, default=0, help="the random seed (default 0)")
    parser.add_argument(
        "--kinds",
        metavar="K,K",
        help="only these request kinds or bins (e.g. cancel,book or cancel/refused); "
        "combinations whose requests are all listed are kept",
    )
    parser.add_argument(
        "--grading",
        choices=("strict", "benchmark"),
        default="strict",
        help="strict (default): doing nothing scores 0; benchmark: graded as the 50 tasks",
    )
    parser.add_argument(
        "--allow-benchmark-entities",
        action="store_true",
        help="also use users and reservations that tau2/tau3 tasks name",
    )
    parser.add_argument(
        "--test-share",
        type=float,
        default=0.0,
        metavar="F",
        help="put about this share of the tasks in split 'test' (default 0: all in 'train')",
    )
    parser.add_argument(
        "--pools",
        action="store_true",
        help="also print how wide each entry of the mix's pool is and how its tasks used it",
    )
    parser.add_argument("--out", required=True, metavar="FILE", help="where to write tasks.json")


def _too_large(n: int, budget: int, how: str) -> ConfigError:
    return ConfigError(
        f"--n {n:,} {how}, over the {size_text(budget)} a tasks file may have for the other "
        f"commands to read it; generate fewer per file, or set ${ENV_MAX_FILE_MB} (--out was "
        "left as it was)"
    )


class _Writer:
    """Each generated record into ``out`` as it comes, within the readers' size limit."""

    def __init__(self, out: OutputFile, n: int, budget: int, progress: Progress) -> None:
        self.out, self.n, self.budget, self.progress = out, n, budget, progress
        self.text = TasksText()
        self.step = max(1, n // 10)  # a plain stream gets about ten lines

    def __call__(self, record: dict[str, Any]) -> None:
        self.out.write(self.text.record(record))
        done, size = self.text.count, self.out.chars
        if size + len(self.text.end()) > self.budget:
            how = f"stopped at task {done:,}: {done - 1:,} fit"
            raise _too_large(self.n, self.budget, how)
        checked = done == min(ESTIMATE_AFTER, self.n) or done % self.step == 0
        if checked and done < self.n and size / done * self.n > self.budget:
            how = (
                f"would make about {size_text(int(size / done * self.n))} "
                f"({size_text(size // done)} a task so far: about "
                f"{int(self.budget / (size / done)):,} fit)"
            )
            raise _too_large(self.n, self.budget, how)
        status = size_text(size)
        line = f"generated {done:,} of {self.n:,} ({status})"
        self.progress.count(done, status, line if done % self.step == 0 else None)

    def close(self) -> None:
        self.out.write(self.text.end())


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym generate``."""
    from airline_gym.taskgen.generate import generate

    budget = effective_limit(TASKS_MAX_BYTES)
    most = min(MAX_TASKS, budget // MIN_TASK_BYTES)
    if not 1 <= args.n <= most:
        if args.n > most and most < MAX_TASKS:
            how = (
                f"cannot fit (a task takes at least {size_text(MIN_TASK_BYTES)}: "
                f"{most:,} at most, about 14,000 of the default mix)"
            )
            raise _too_large(args.n, budget, how)
        raise ConfigError(f"--n must be between 1 and {most:,}, not {args.n}")
    kinds = None if args.kinds is None else args.kinds.split(",")
    try:
        with (
            OutputFile(args.out, inputs=data_inputs()) as out,
            Progress("generating tasks", total=args.n) as progress,
        ):
            writer = _Writer(out, args.n, budget, progress)
            try:
                made = generate(
                    args.n,
                    args.seed,
                    kinds=kinds,
                    grading=args.grading,
                    allow_benchmark_entities=args.allow_benchmark_entities,
                    test_share=args.test_share,
                    sink=writer,
                )
            except ValueError as exc:  # a bad option, or a mix the DB cannot fill
                raise ConfigError(str(exc)) from None
            writer.close()
    except KeyboardInterrupt:  # the temp file is gone, --out as it was
        print(f"interrupted: nothing written ({args.out} left as it was)", file=sys.stderr)
        return 130
    errors = {k: v for k, v in made.rejected.items() if k.startswith("error")}
    if errors:  # proposals the solver or the instructions writer could not handle: skipped
        shown = ", ".join(f"{v} x {k[7:]}" for k, v in sorted(errors.items()))
        print(f"skipped proposals that raised: {shown}", file=sys.stderr)
    print(
        f"wrote {made.made} tasks to {args.out} (grading {args.grading}; "
        f"{made.unchanged} leave the DB unchanged)"
    )
    print(
        f"available: {made.users_available} users, {made.reservations_available} reservations "
        f"({made.users_excluded} users and {made.reservations_excluded} reservations left out"
        + (")" if args.allow_benchmark_entities else " as named by tau2/tau3 tasks)"),
        file=sys.stderr,
    )
    if args.pools:
        print(pool_table(made.pools), file=sys.stderr)
    return 0


def pool_table(pools: Mapping[str, PoolUse]) -> str:
    """Each entry of the mix: its pool's width, the tasks made, how many distinct (user,
    reservations) they hold, and whether the pool was used up (a repeat was the DB's only
    choice)."""
    lines = [
        "| entry of the mix | pool width | tasks | distinct | pool used up |",
        "|---|---|---|---|---|",
    ]
    for name, use in pools.items():
        used_up = "yes" if use.rounds > 1 else "no"
        lines.append(f"| {name} | {use.width} | {use.tasks} | {use.distinct} | {used_up} |")
    return "\n".join(lines)
