"""Audit the grading: which tasks a do-nothing agent and a transfer-only agent pass.

Runs NoOpAgent (calls done at once) and TransferAgent (transfers to a human at once) on every
task against the scripted customer, with GoldAgent (the reference solution) as a sanity column.
Under the reference's grading a do-nothing agent passes 19 of the 50 tau2 tasks and 23 of
the 50 tau3 tasks (--benchmark tau3): those expect no database change and nothing said. Exit
code 1 if the gold agent fails a task (the task set or the env is broken).

  airline-gym audit
  airline-gym audit --benchmark tau3
  airline-gym audit --json
"""

from __future__ import annotations

import argparse
import json
import sys

from airline_gym.cli.formatting import format_table
from airline_gym.cli.options import add_benchmark_arguments
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, benchmark_tasks
from airline_gym.domain.tasks import load_task_set
from airline_gym.harness.results import is_success

AUDITED = ("noop", "transfer", "gold")


def audit(
    tasks: str | None = None,
    split: str = "base",
    seed: int = 0,
    benchmark: str = DEFAULT_BENCHMARK,
) -> dict[str, list[str]]:
    """Agent name -> ids of the tasks it passes (``noop``, ``transfer``, ``gold``); ``tasks``:
    a tasks.json path, default the benchmark's own."""
    from airline_gym.agents import builtin_agent
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.harness.runner import run_episode

    task_set = load_task_set(benchmark_tasks(tasks, benchmark))
    ids = [t.id for t in task_set.split(split)]
    env = AirlineEnv(tasks=tasks, user="scripted", benchmark=benchmark)
    passed: dict[str, list[str]] = {name: [] for name in AUDITED}
    for name in AUDITED:
        for task_id in ids:
            result = run_episode(env, builtin_agent(name, task_set, seed), task_id, seed=seed)
            if is_success(result.reward_info.get("reward")):
                passed[name].append(task_id)
    return passed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym audit``."""
    add_benchmark_arguments(parser)
    parser.add_argument("--split", default="base", help="train, test or base (all; default)")
    parser.add_argument("--json", action="store_true", help="the passed task ids as JSON")


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym audit``."""
    task_set = load_task_set(benchmark_tasks(args.tasks, args.benchmark))
    ids = [t.id for t in task_set.split(args.split)]
    passed = audit(args.tasks, args.split, benchmark=args.benchmark)
    gold_failed = [t for t in ids if t not in passed["gold"]]
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": args.benchmark,
                    "task_set": task_set.name,
                    "split": args.split,
                    "tasks": len(ids),
                    "passed": passed,
                    "counts": {name: len(v) for name, v in passed.items()},
                }
            )
        )
    else:
        rows = [(t, *("pass" if t in passed[name] else "-" for name in AUDITED)) for t in ids]
        print(format_table(("task", *AUDITED), rows))
        print()
        for name in AUDITED:
            shown = ", ".join(passed[name]) if name != "gold" else ""
            line = f"{name} passes {len(passed[name])}/{len(ids)}"
            print(f"{line}: {shown}" if shown else line)
    if gold_failed:
        print(
            f"airline-gym audit: the gold agent fails {len(gold_failed)} task(s): "
            f"{', '.join(gold_failed)} (the task set or the env is broken)",
            file=sys.stderr,
        )
        return 1
    return 0
