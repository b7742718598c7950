"""Measure the domain layer: episode DB creation, memory per live episode, tool calls, grading.

Every figure is the median of many runs on this machine. Examples:

  airline-gym bench
  airline-gym bench --repeat 2000 --json
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc

from airline_gym.domain.database import PristineDB, load_pristine
from airline_gym.domain.grading import grade
from airline_gym.domain.tasks import Task, load_task_set
from airline_gym.domain.toolbox import execute
from airline_gym.errors import ConfigError
from airline_gym.testing.bench_common import (
    SAMPLE_BOOKING,
    gold_episode,
    median_seconds,
    step_at_depth,
)


def memory_per_episode(tasks: list[Task], base: PristineDB, episodes: int) -> float:
    """Bytes retained per live episode view after a gold replay (tasks cycled)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    live = [gold_episode(tasks[i % len(tasks)], base)[0] for i in range(episodes)]
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del live
    return (after - before) / episodes


def run_benchmarks(repeat: int = 1000, task_id: str = "17") -> dict[str, float]:
    """All figures, in seconds or bytes."""
    base = load_pristine()
    tasks = list(load_task_set())
    task = next(t for t in tasks if t.id == task_id)
    db, messages = gold_episode(task, base)
    grade(task, db, messages, "agent_stop")  # fills the gold cache once, like a live env
    view = base.fork()
    booking = SAMPLE_BOOKING
    figures = {
        "fresh_episode_db_s": median_seconds(base.fork, repeat * 10),
        "get_user_details_s": median_seconds(
            lambda: execute(view, "get_user_details", {"user_id": "mia_li_3668"}), repeat
        ),
        "get_reservation_details_s": median_seconds(
            lambda: execute(view, "get_reservation_details", {"reservation_id": "4WQ150"}), repeat
        ),
        "search_direct_flight_s": median_seconds(
            lambda: execute(
                view,
                "search_direct_flight",
                {"origin": "JFK", "destination": "ATL", "date": "2024-05-20"},
            ),
            repeat,
        ),
        "search_onestop_flight_s": median_seconds(
            lambda: execute(
                view,
                "search_onestop_flight",
                {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"},
            ),
            repeat,
        ),
        "book_reservation_s": median_seconds(
            lambda: execute(base.fork(), "book_reservation", booking), repeat
        ),
        "grade_episode_s": median_seconds(lambda: grade(task, db, messages, "agent_stop"), repeat),
        "gold_replay_50_tasks_s": median_seconds(
            lambda: [gold_episode(t, base) for t in tasks], max(5, repeat // 100)
        ),
        "full_db_hash_s": median_seconds(db.hash, max(5, repeat // 100)),
        "memory_per_live_episode_bytes": memory_per_episode(tasks, base, 500),
    }
    return figures


def env_figures(repeat: int, episodes: int = 200, live_envs: int = 1000) -> dict[str, float]:
    """Env-level figures through ``gym.make`` with the scripted customer (no LLM)."""
    import gymnasium as gym

    import airline_gym  # noqa: F401  (registers the envs)
    from airline_gym.agents import GoldAgent, tool_call_message
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.harness.runner import run_episodes

    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    read = tool_call_message("get_reservation_details", {"reservation_id": "FQ8APE"}, "b")

    deep = AirlineEnv(user="scripted", task=17, max_steps=10**6)
    episodes = max(1, min(repeat // 20, 20))
    steps_at = {  # a read step as the 10th and the 500th of an episode (resets not timed)
        depth: step_at_depth(
            lambda: deep.reset(seed=0), lambda: deep.step(read), depth, 20, episodes
        )
        for depth in (10, 500)
    }

    airline = env.unwrapped
    assert isinstance(airline, AirlineEnv)
    tasks = airline.task_set
    jobs = [(t.id, i) for i, t in enumerate(list(tasks) * (episodes // len(tasks) + 1))][:episodes]
    start = time.perf_counter()
    run_episodes(lambda: AirlineEnv(user="scripted"), lambda: GoldAgent(tasks), jobs, 64)
    per_second = len(jobs) / (time.perf_counter() - start)

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    live = []
    for i in range(live_envs):
        e = AirlineEnv(user="scripted", task=17)
        e.reset(seed=i)
        e.step(read)
        live.append(e)
    gc.collect()
    per_env = (tracemalloc.get_traced_memory()[0] - before) / live_envs
    tracemalloc.stop()
    del live
    return {
        "env_reset_s": median_seconds(lambda: env.reset(seed=0), repeat),
        "env_read_step_at_step_10_s": steps_at[10],
        "env_read_step_at_step_500_s": steps_at[500],
        "gold_episodes_per_s": per_second,
        "memory_per_live_env_bytes": per_env,
    }


def format_figures(figures: dict[str, float]) -> str:
    """A readable table of the figures."""
    lines = []
    for name, value in figures.items():
        if name.endswith("_bytes"):
            shown = f"{value / 1024:,.1f} KiB"
        elif name.endswith("_per_s"):
            shown = f"{value:,.0f} /s"
        elif value < 1e-3:
            shown = f"{value * 1e6:,.1f} µs"
        else:
            shown = f"{value * 1e3:,.2f} ms"
        label = (
            name.removesuffix("_bytes").removesuffix("_s") if not name.endswith("_per_s") else name
        )
        lines.append(f"{label:32s} {shown:>14s}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym bench``."""
    parser.add_argument("--repeat", type=int, default=1000, help="runs per figure (default 1000)")
    parser.add_argument(
        "--task", default="17", help="one task's id, e.g. 17 (default 17; its episode is graded)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    side_by_side = "measure the reference (tau2, if installed) on the same work, side by side"
    parser.add_argument("--vs-reference", action="store_true", help=side_by_side)
    from airline_gym.testing import bench_e2e, bench_reference

    bench_reference.add_arguments(parser)
    bench_e2e.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym bench``."""
    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    if args.e2e:
        from airline_gym.testing import bench_e2e

        return bench_e2e.run(args)
    if args.vs_reference:
        from airline_gym.testing import bench_reference

        return bench_reference.run(args)
    from airline_gym.progress import Progress

    with Progress("airline-gym bench") as progress:
        progress.update("domain figures (1 of 2)")
        figures = run_benchmarks(args.repeat, str(args.task))
        progress.update("env figures (2 of 2)")
        # live envs for the memory figure: 1,000 by default, fewer for a quick --repeat
        figures.update(env_figures(args.repeat, live_envs=min(1000, max(50, args.repeat))))
    print(json.dumps(figures) if args.json else format_figures(figures))
    return 0
