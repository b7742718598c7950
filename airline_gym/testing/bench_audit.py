"""Benchmark the exploit audit: N generated tasks (default 500) x every observation-only agent.

::

    python -m airline_gym.testing.bench_audit --n 500 --seed 31337 [--workers 2]

Generates the tasks, then plays every agent of ``airline-gym audit --tasks``'s exploit audit on
each (the offline customer; in one process, or ``--workers`` processes as ``audit --workers``
does) and prints one JSON object: tasks, agents, episodes, seconds in all (and per agent in one
process), episodes per second, CPU seconds (the workers' included), the load average when it
ended. Not a timed test: a loaded machine is slower.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measure(n: int, seed: int, workers: int = 1) -> dict[str, object]:
    """Generate ``n`` tasks and audit them; the figures as a dict."""
    from airline_gym.domain.tasks import load_task_set
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.harness.exploit_audit import AGENTS, play, play_in_processes
    from airline_gym.taskgen.generate import generate
    from airline_gym.taskgen.output import write_tasks

    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tasks.json"
        write_tasks(generate(n, seed).records, path)
        task_set = load_task_set(str(path))
        ids = [t.id for t in task_set]
        cpu = _cpu()
        start = time.perf_counter()
        if workers > 1:
            play_in_processes(str(path), ids, AGENTS, workers)
        else:
            env = AirlineEnv(tasks=str(path), user="scripted")
            for name in AGENTS:
                began = time.perf_counter()
                play(env, task_set, ids, [name])
                seconds[name] = round(time.perf_counter() - began, 2)
        wall = time.perf_counter() - start
    episodes = len(ids) * len(AGENTS)
    return {
        "tasks": len(ids),
        "agents": len(AGENTS),
        "episodes": episodes,
        "workers": workers,
        "seconds": round(wall, 1),
        "cpu_seconds": round(_cpu() - cpu, 1),
        "episodes_per_s": round(episodes / wall, 1),
        "per_agent_s": seconds,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--n``, ``--seed``, ``--workers``."""
    parser = argparse.ArgumentParser(prog="python -m airline_gym.testing.bench_audit")
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--seed", type=int, default=31337)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    if not 1 <= args.n <= 100_000:
        print("bench_audit: --n must be between 1 and 100000", file=sys.stderr)
        return 2
    if not 1 <= args.workers <= 64:
        print("bench_audit: --workers must be between 1 and 64", file=sys.stderr)
        return 2
    print(json.dumps(measure(args.n, args.seed, args.workers)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
