"""How ``airline-gym eval``'s memory grows with the number of episodes (issue 35, item 21).

Runs ``airline-gym eval --agent random`` on the 50 tau2 tasks with the scripted customer,
``--trials N / 50``, into a fresh results file, each size in a process of its own, and prints
the process's peak resident memory (``wait4``'s ``ru_maxrss``), the wall time and the size of
the results file. Memory is flat when the peak stays the same as N grows::

    python -m airline_gym.testing.bench_eval_memory 1000 20000

``--source DIR`` runs the ``airline_gym`` package found in ``DIR`` instead (e.g. an older
commit's tree from ``git archive``), for a before/after on the same machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = 50  # the tau2 task set


def measure(episodes: int, source: str | None = None, agent: str = "random") -> dict[str, float]:
    """Peak RSS (MiB), wall seconds and results-file size (MiB) of one eval of ``episodes``."""
    trials = max(1, episodes // TASKS)
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    if source:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run.json"
        command = [sys.executable, "-m", "airline_gym.cli", "eval", "--agent", agent]
        command += ["--trials", str(trials), "--out", str(out), "--json"]
        log = Path(folder) / "stderr.txt"  # a file, not a pipe: a full pipe would stop eval
        start = time.perf_counter()
        with (
            log.open("wb") as errors,
            subprocess.Popen(
                command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=errors
            ) as proc,
        ):
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            tail = log.read_text(errors="replace").strip()[-500:]
            raise RuntimeError(f"eval exited {proc.returncode}: {tail}")
        size = out.stat().st_size
    return {
        "episodes": trials * TASKS,
        "peak_rss_mib": usage.ru_maxrss / 1024,  # kilobytes on Linux
        "seconds": elapsed,
        "file_mib": size / (1 << 20),
    }


def main(argv: list[str] | None = None) -> None:
    """Print one line per run size given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 20000])
    parser.add_argument("--source", default=None, help="a folder holding another airline_gym")
    parser.add_argument("--agent", default="random", help="the built-in agent (default random)")
    args = parser.parse_args(argv)
    for size in args.sizes:
        m = measure(size, args.source, args.agent)
        print(
            f"{int(m['episodes'])} episodes: peak RSS {m['peak_rss_mib']:.0f} MiB, "
            f"{m['seconds']:.0f} s, results file {m['file_mib']:.0f} MiB",
            flush=True,
        )


if __name__ == "__main__":
    main()
