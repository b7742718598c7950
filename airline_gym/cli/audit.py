"""Audit the grading: which tasks a do-nothing agent and a transfer-only agent pass.

Runs NoOpAgent (calls done at once) and TransferAgent (transfers to a human at once) on every
task against the scripted customer, with GoldAgent (the reference solution) as a sanity column.
Under the reference's grading a do-nothing agent passes 19 of the 50 tau2 tasks and 23 of
the 50 tau3 tasks (--benchmark tau3): those expect no database change and nothing said. Exit
code 1 if the gold agent fails a task (the task set or the env is broken).

  airline-gym audit
  airline-gym audit --benchmark tau3
  airline-gym audit --json
  airline-gym audit --reward-basis DB,COMMUNICATE --reward-basis DB,COMMUNICATE,ACTION

On generated tasks (airline-gym generate --tasks FILE) a fourth agent, lookup, makes the gold's
lookups and then refuses, and the sanity column is gold-dialogue (the gold calls in a
policy-following dialogue; strict grading gives the bare gold calls nothing); the summary gives
each agent's pass rate on the tasks that change the DB and on those that do not, under each
task's own reward basis.

  airline-gym audit --tasks generated.json

With --reward-basis (repeatable), each agent's episodes are graded on every basis given and
the counts are shown per basis; NL_ASSERTION asks an LLM judge (--judge-model,
--judge-api-base). The gold agent is checked (exit 1) under the tasks' own basis only.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from airline_gym.cli import audit_exploits
from airline_gym.cli.formatting import format_table
from airline_gym.cli.options import (
    add_benchmark_arguments,
    add_reward_basis_arguments,
    judge_from_args,
    reward_bases,
)
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, benchmark_tasks
from airline_gym.domain.tasks import load_task_set
from airline_gym.harness.results import is_success
from airline_gym.printable import printable

AUDITED = ("noop", "transfer", "gold")
#: On generated tasks: the agent that looks up and refuses, too; the sanity column is
#: gold-dialogue, since strict grading gives the bare gold calls (no confirmation, no refusal
#: said, the call hung up) nothing.
AUDITED_GENERATED = ("noop", "transfer", "lookup", "gold-dialogue")


def _generated(task_set: Any) -> bool:
    return any(isinstance(t.raw.get("airline_gym"), dict) for t in task_set)


def _agent(name: str, task_set: Any, seed: int) -> Any:
    from airline_gym.agents import builtin_agent
    from airline_gym.agents.scripted import LookupAgent

    return LookupAgent(task_set) if name == "lookup" else builtin_agent(name, task_set, seed)


def audit(
    tasks: str | None = None,
    split: str = "base",
    seed: int = 0,
    benchmark: str = DEFAULT_BENCHMARK,
) -> dict[str, list[str]]:
    """Agent name -> ids of the tasks it passes (``noop``, ``transfer``, ``gold``); ``tasks``:
    a tasks.json path, default the benchmark's own."""
    return audit_bases(tasks, split, seed, benchmark)[None]


def audit_bases(
    tasks: str | None = None,
    split: str = "base",
    seed: int = 0,
    benchmark: str = DEFAULT_BENCHMARK,
    bases: list[tuple[str, ...]] | None = None,
    judge: Any = None,
) -> dict[tuple[str, ...] | None, dict[str, list[str]]]:
    """Basis (None: the tasks' own) -> agent name -> ids of the tasks it passes.

    Each agent plays each task once; its episode is graded on every basis (the judge, needed
    for NL_ASSERTION, is asked once per episode and basis).
    """
    from airline_gym.domain.grading import grading
    from airline_gym.domain.nl_assertions import judged
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.harness.runner import run_episode

    task_set = load_task_set(benchmark_tasks(tasks, benchmark))
    ids = [t.id for t in task_set.split(split)]
    env = AirlineEnv(tasks=tasks, user="scripted", benchmark=benchmark)
    keys: list[tuple[str, ...] | None] = [None, *(bases or [])]
    agents = AUDITED_GENERATED if _generated(task_set) else AUDITED
    passed: dict[tuple[str, ...] | None, dict[str, list[str]]] = {
        key: {name: [] for name in agents} for key in keys
    }
    for name in agents:
        for task_id in ids:
            result = run_episode(env, _agent(name, task_set, seed), task_id, seed=seed)
            if is_success(result.reward_info.get("reward")):
                passed[None][name].append(task_id)
            episode = env.episode
            assert episode is not None
            for basis in bases or []:
                steps = grading(
                    episode.task,
                    episode.db,
                    episode.transcript(),
                    episode.termination_reason or "",
                    basis,
                    judge,
                )
                grade = judged(steps, judge)
                if grade.judge_error:
                    raise RuntimeError(f"task {task_id} ({name}): {grade.judge_error}")
                if is_success(grade.reward):
                    passed[basis][name].append(task_id)
    return passed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym audit``."""
    add_benchmark_arguments(parser)
    parser.add_argument("--split", default="base", help="train, test or base (all; default)")
    parser.add_argument("--json", action="store_true", help="the passed task ids as JSON")
    add_reward_basis_arguments(parser, repeatable=True)
    audit_exploits.add_arguments(parser)


def _exploits(
    args: argparse.Namespace, task_set: Any, ids: list[str], names: tuple[str, ...]
) -> dict[str, Any] | None:
    """The exploit audit of a generated task set (None: no agents asked for, or not generated)."""
    if not names or not _generated(task_set):
        return None
    return audit_exploits.exploit_audit(
        args.tasks, task_set, ids, names, args.workers, args.benchmark
    )


def _exploit_verdict(args: argparse.Namespace, report: dict[str, Any] | None) -> int:
    failed = audit_exploits.failed_checks(report) if report else []
    if failed and args.fail_on_exploit:
        print(
            f"airline-gym audit: {len(failed)} check(s) of the exploit audit do not hold: "
            f"{', '.join(failed)}",
            file=sys.stderr,
        )
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym audit``."""
    task_set = load_task_set(benchmark_tasks(args.tasks, args.benchmark))
    ids = [t.id for t in task_set.split(args.split)]
    bases = reward_bases(args)
    names = audit_exploits.selected_agents(args.agents)
    audit_exploits.check_workers(args.workers)
    try:
        judge = judge_from_args(args, bases)
        by_basis = audit_bases(args.tasks, args.split, 0, args.benchmark, bases, judge)
    except RuntimeError as exc:
        print(f"airline-gym audit: the NL judge failed: {exc}", file=sys.stderr)
        return 1
    passed = by_basis[None]
    agents = tuple(passed)
    exploits = _exploits(args, task_set, ids, names)
    if args.json:
        record: dict[str, Any] = {
            "benchmark": args.benchmark,
            "task_set": task_set.name,
            "split": args.split,
            "tasks": len(ids),
            "passed": passed,
            "counts": {name: len(v) for name, v in passed.items()},
        }
        if bases:
            record["by_basis"] = [
                {
                    "reward_basis": list(basis),
                    "passed": by_basis[basis],
                    "counts": {name: len(v) for name, v in by_basis[basis].items()},
                }
                for basis in bases
            ]
        if exploits is not None:
            record["exploit_audit"] = exploits
        print(json.dumps(record))
    elif bases:
        rows = [
            (
                "own (leaderboard)" if basis is None else ",".join(basis),
                *(f"{len(by_basis[basis][name])}/{len(ids)}" for name in agents),
            )
            for basis in by_basis
        ]
        print(format_table(("reward basis", *agents), rows))
    else:
        if agents == AUDITED_GENERATED:
            print(format_table(*summary_table(task_set, ids, passed)))
            if exploits is not None:
                audit_exploits.print_report(exploits)
            return _gold_verdict(ids, passed) or _exploit_verdict(args, exploits)
        rows = [(t, *("pass" if t in passed[name] else "-" for name in agents)) for t in ids]
        print(format_table(("task", *agents), rows))
        print()
        for name in agents:
            shown = ", ".join(map(printable, passed[name])) if name != "gold" else ""
            line = f"{name} passes {len(passed[name])}/{len(ids)}"
            print(f"{line}: {shown}" if shown else line)
    return _gold_verdict(ids, passed) or _exploit_verdict(args, exploits)


def summary_table(
    task_set: Any, ids: list[str], passed: dict[str, list[str]]
) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """Generated tasks: each agent's passes by grading and by whether the gold changes the DB."""
    groups: dict[str, list[str]] = {}
    for task_id in ids:
        meta = task_set[task_id].raw.get("airline_gym") or {}
        db = "changes DB" if meta.get("changes_db") else "DB unchanged"
        groups.setdefault(f"{meta.get('grading', '-')}, {db}", []).append(task_id)
        groups.setdefault(f"{meta.get('grading', '-')}, all", []).append(task_id)
    rows = []
    for group, members in sorted(groups.items()):
        cells = []
        for name in passed:
            got = len(set(members) & set(passed[name]))
            cells.append(f"{got}/{len(members)} ({100 * got / len(members):.0f}%)")
        rows.append((group, *cells))
    return ("tasks", *passed), rows


def _gold_verdict(ids: list[str], passed: dict[str, list[str]]) -> int:
    gold = "gold" if "gold" in passed else "gold-dialogue"
    gold_failed = [t for t in ids if t not in passed[gold]]
    if gold_failed:
        print(
            f"airline-gym audit: the gold agent fails {len(gold_failed)} task(s): "
            f"{', '.join(map(printable, gold_failed))} (the task set or the env is broken)",
            file=sys.stderr,
        )
        return 1
    return 0
