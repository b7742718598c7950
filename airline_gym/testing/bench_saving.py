"""How the cost of ``evaluate(out=...)`` grows with the number of simulations (issue 11.7).

Runs the do-nothing agent on every task with the scripted customer, ``trials`` = N / 50, into a
fresh results file, and prints the wall time for each N. Saving is linear when doubling N about
doubles the time (the episodes themselves are a few milliseconds each)::

    python -m airline_gym.testing.bench_saving 800 1600
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from airline_gym.harness.evaluate import EvalConfig, evaluate


def measure(simulations: int, tasks: int = 50) -> float:
    """Seconds for one ``evaluate`` run of ``simulations`` noop episodes saved to a file."""
    trials = max(1, simulations // tasks)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run.json"
        start = time.perf_counter()
        results = evaluate("noop", EvalConfig(trials=trials), out=out)
        elapsed = time.perf_counter() - start
        if len(results.simulations) != trials * tasks:
            raise RuntimeError(f"expected {trials * tasks} simulations")
    return elapsed


def main(argv: list[str] | None = None) -> None:
    """Print the time of each run size given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[800, 1600])
    args = parser.parse_args(argv)
    for size in args.sizes:
        print(f"{size} simulations: {measure(size):.1f} s", flush=True)


if __name__ == "__main__":
    main()
