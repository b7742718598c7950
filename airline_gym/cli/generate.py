"""Generate training tasks that are not the test set: a tasks.json in tau2's format.

Intents are sampled from the DB (every kind of request in the 50 tasks, alone and in
combinations of 2-3), the policy solver decides each, and the tasks keep the wanted mix of kinds
and outcomes. Same seed and data: a byte-identical file. Users and reservations any tau2 or tau3
task names are left out unless --allow-benchmark-entities.

Grading: 'strict' (default) puts the lookups a refusal depends on in the gold and ACTION in the
task's reward basis, so doing nothing scores 0; 'benchmark' grades as the 50 tasks do
(DB x COMMUNICATE, writes only).

  airline-gym generate --n 500 --seed 1 --out tasks.json
  airline-gym generate --n 200 --seed 2 --kinds cancel,change_flights --out cancel.json
  airline-gym generate --n 100 --seed 3 --grading benchmark --out bench-graded.json
  airline-gym generate --n 1000 --seed 4 --pools --out tasks.json   # each pool's width
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from airline_gym.data.limits import ENV_MAX_FILE_MB, TASKS_MAX_BYTES
from airline_gym.errors import ConfigError
from airline_gym.taskgen.output import write_tasks

if TYPE_CHECKING:
    from airline_gym.taskgen.generate import PoolUse

MAX_TASKS = 1_000_000


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


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym generate``."""
    from airline_gym.taskgen.generate import generate

    if not 1 <= args.n <= MAX_TASKS:
        raise ConfigError(f"--n must be between 1 and {MAX_TASKS}, not {args.n}")
    kinds = None if args.kinds is None else args.kinds.split(",")
    try:
        made = generate(
            args.n,
            args.seed,
            kinds=kinds,
            grading=args.grading,
            allow_benchmark_entities=args.allow_benchmark_entities,
            test_share=args.test_share,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    write_tasks(made.records, args.out)
    size = os.path.getsize(args.out)
    if size > TASKS_MAX_BYTES and not os.environ.get(ENV_MAX_FILE_MB):  # refused elsewhere
        print(
            f"note: {args.out} is {size / 2**20:.0f} MiB, over the {TASKS_MAX_BYTES // 2**20} MiB "
            "a tasks file may have elsewhere: generate fewer tasks per file (about 14,000 fit) "
            "or set $AIRLINE_GYM_MAX_FILE_MB",
            file=sys.stderr,
        )
    errors = {k: v for k, v in made.rejected.items() if k.startswith("error")}
    if errors:  # proposals the solver or the instructions writer could not handle: skipped
        shown = ", ".join(f"{v} x {k[7:]}" for k, v in sorted(errors.items()))
        print(f"skipped proposals that raised: {shown}", file=sys.stderr)
    changing = sum(r["airline_gym"]["changes_db"] for r in made.records)
    print(
        f"wrote {len(made.records)} tasks to {args.out} (grading {args.grading}; "
        f"{len(made.records) - changing} leave the DB unchanged)"
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
