"""List the tasks of a task set, with filters: what each tests, its gold actions, what to say.

Columns: id, split, gold actions, writes (actions that change the database), communicate
(strings the agent must say), and the task author's purpose note.

  airline-gym tasks
  airline-gym tasks --split test --min-writes 2
  airline-gym tasks --purpose flight --communicate
  airline-gym tasks --writes 0 --json
  airline-gym tasks --benchmark tau3
  airline-gym tasks --tasks generated.json --kind cancel --distribution

Generated tasks (airline-gym generate) also show their kinds and outcomes; --kind keeps those
with a request of that kind (or bin, e.g. cancel/refused) and --distribution prints how many
tasks there are by kind, outcome, tier, cabin, passengers, payment methods and trait (each
trait's count and share, 0 included; --json adds ``trait_share``). A task without a ``traits``
field gets its traits computed from its intent, or counts as ``unknown`` without one.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from airline_gym.cli.formatting import format_table, write_count
from airline_gym.cli.options import add_benchmark_arguments
from airline_gym.domain.benchmarks import benchmark_tasks
from airline_gym.domain.tasks import Task, TaskSet, load_task_set
from airline_gym.errors import ConfigError
from airline_gym.printable import printable

PURPOSE_WIDTH = 70


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym tasks``."""
    add_benchmark_arguments(parser)
    parser.add_argument("--split", default="base", help="train, test or base (all; default)")
    parser.add_argument("--purpose", metavar="TEXT", help="purpose contains TEXT (any case)")
    writes = parser.add_mutually_exclusive_group()
    writes.add_argument("--writes", type=int, metavar="N", help="exactly N write actions")
    writes.add_argument("--min-writes", type=int, metavar="N", help="at least N write actions")
    parser.add_argument(
        "--communicate", action="store_true", help="only tasks with strings the agent must say"
    )
    parser.add_argument("--json", action="store_true", help="one JSON list of task records")
    parser.add_argument(
        "--kind",
        action="append",
        metavar="KIND",
        help="generated tasks with a request of this kind or bin (repeatable: any of them)",
    )
    parser.add_argument(
        "--distribution",
        action="store_true",
        help="print the chosen tasks' distribution by kind, outcome, tier, cabin, passengers, "
        "payment methods and trait",
    )


def generated_meta(task: Task) -> dict[str, Any]:
    """The ``"airline_gym"`` key of a generated task's record ({} for other tasks)."""
    meta = task.raw.get("airline_gym")
    return meta if isinstance(meta, dict) else {}


def splits_of(task_set: TaskSet, task_id: str) -> list[str]:
    """The named splits (other than base) that hold a task."""
    return [name for name, ids in task_set.splits.items() if name != "base" and task_id in ids]


def task_record(task_set: TaskSet, task: Task) -> dict[str, Any]:
    """A task's summary as JSON-ready data."""
    return {
        "id": task.id,
        "splits": splits_of(task_set, task.id),
        "purpose": task.purpose,
        "actions": [{"name": a.name, "arguments": a.arguments} for a in task.actions],
        "writes": write_count(task.actions),
        "communicate_info": list(task.communicate_info),
        "reward_basis": list(task.reward_basis),
        **({"kinds": meta["kinds"]} if "kinds" in (meta := generated_meta(task)) else {}),
    }


def select(task_set: TaskSet, args: argparse.Namespace) -> list[Task]:
    """The tasks of ``args.split`` that pass every filter."""
    for flag in ("writes", "min_writes"):
        value = getattr(args, flag)
        if value is not None and value < 0:
            raise ConfigError(f"--{flag.replace('_', '-')} must be >= 0")
    chosen = []
    for task in task_set.split(args.split):
        writes = write_count(task.actions)
        if args.purpose and args.purpose.lower() not in (task.purpose or "").lower():
            continue
        if args.writes is not None and writes != args.writes:
            continue
        if args.min_writes is not None and writes < args.min_writes:
            continue
        if args.communicate and not task.communicate_info:
            continue
        if args.kind:
            meta = generated_meta(task)
            tags = set(meta.get("kinds") or []) | set(meta.get("bins") or [])
            if not tags & set(args.kind):
                continue
        chosen.append(task)
    return chosen


def _short(text: str | None, width: int = PURPOSE_WIDTH) -> str:
    text = " ".join((text or "-").split())
    return text if len(text) <= width else text[: width - 3] + "..."


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym tasks``."""
    task_set = load_task_set(benchmark_tasks(args.tasks, args.benchmark))
    chosen = select(task_set, args)
    if args.distribution:
        return _print_distribution(chosen, args.json)
    if args.json:
        print(json.dumps([task_record(task_set, t) for t in chosen]))
        return 0
    rows = [
        (
            t.id,
            ",".join(splits_of(task_set, t.id)) or "-",
            len(t.actions),
            write_count(t.actions),
            len(t.communicate_info),
            _short(t.purpose),
        )
        for t in chosen
    ]
    headers = ("id", "split", "actions", "writes", "communicate", "purpose")
    print(format_table(headers, rows))
    print(f"\n{len(chosen)} of {len(task_set)} tasks ({printable(task_set.name)})")
    return 0


def _print_distribution(chosen: list[Task], as_json: bool) -> int:
    from airline_gym.taskgen.stats import distribution, trait_shares

    counts = distribution(t.raw for t in chosen)
    if as_json:
        out: dict[str, Any] = {dim: dict(sorted(c.items())) for dim, c in counts.items()}
        out["trait"] = dict(counts["trait"])  # in TRAITS order
        print(json.dumps({**out, "trait_share": trait_shares(counts, len(chosen))}))
        return 0
    total = len(chosen) or 1
    for dim, counter in counts.items():
        items = counter.items() if dim == "trait" else sorted(counter.items())
        rows = [(value, n, f"{100 * n / total:.1f}%") for value, n in items]
        print(format_table((dim, "tasks", "share"), rows))
        print()
    print(f"{len(chosen)} tasks")
    return 0
