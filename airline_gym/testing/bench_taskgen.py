"""Benchmark ``airline-gym generate``: wall time and peak memory for N tasks (default 10,000).

Run in a fresh process (peak RSS counts the whole process)::

    python -m airline_gym.testing.bench_taskgen --n 10000 --seed 0

Prints one JSON object: tasks, seconds (generating, its CPU time; writing the file separately),
tasks per second, peak RSS in MiB, the load average when it ended, and the share of tasks that
leave the DB unchanged. Not a timed test: a loaded machine is slower.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def measure(n: int, seed: int, grading: str = "strict") -> dict[str, object]:
    """Generate ``n`` tasks and write them; the figures as a dict."""
    from airline_gym.domain.database import load_pristine
    from airline_gym.taskgen.generate import generate
    from airline_gym.taskgen.output import write_tasks

    load_pristine()  # parsing db.json is not generating
    start, cpu = time.perf_counter(), time.process_time()
    made = generate(n, seed, grading=grading)
    generating = time.perf_counter() - start
    cpu = time.process_time() - cpu
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "tasks.json"
        start = time.perf_counter()
        write_tasks(made.records, out)
        writing = time.perf_counter() - start
        size = out.stat().st_size
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    unchanged = sum(not r["airline_gym"]["changes_db"] for r in made.records)
    return {
        "tasks": len(made.records),
        "grading": grading,
        "generate_s": round(generating, 2),
        "generate_cpu_s": round(cpu, 2),
        "write_s": round(writing, 2),
        "tasks_per_s": round(len(made.records) / generating, 1) if generating else None,
        "file_mib": round(size / 2**20, 1),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "proposals": made.proposals,
        "db_unchanged_share": round(unchanged / max(1, len(made.records)), 3),
        "users_available": made.users_available,
        "reservations_available": made.reservations_available,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--n``, ``--seed``, ``--grading``."""
    parser = argparse.ArgumentParser(prog="python -m airline_gym.testing.bench_taskgen")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grading", choices=("strict", "benchmark"), default="strict")
    args = parser.parse_args(argv)
    if not 1 <= args.n <= 1_000_000:
        print("bench_taskgen: --n must be between 1 and 1000000", file=sys.stderr)
        return 2
    print(json.dumps(measure(args.n, args.seed, args.grading)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
