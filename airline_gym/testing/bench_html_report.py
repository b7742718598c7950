"""Measure the HTML report on a large run: file size, build time, time to open in a browser.

A run of N simulations (default 1,000) is made of real recorded ones (the tau2 leaderboard
files of ../shared/trajectories by default, cycled, with trials renumbered so every (task,
trial) is distinct); its report is written; then headless Chromium opens it from disk and the
page's own clock says when the list was drawn (``data-ready-ms``, from navigation start) and
how long opening one simulation took (decompress and draw), and how long the first full-text
search took (it decodes every transcript; 150 ms of that is the typing pause).

  python -m airline_gym.testing.bench_html_report [--sims 1000] [FILE ...]
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from airline_gym.harness.report import write_report
from airline_gym.harness.results.io import Results

__all__ = ["big_run", "main", "measure_in_browser"]

_DEFAULT = (
    "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json",
    "t2old__lb-distyl-button__claude-opus-4-6__user-gpt-4.1.json",
    "t2old__lb-ironshell__llm_agent-claude-opus-4-6__user-gpt-4.1.json",
    "t2old__lb-ironshell__llm_agent-gpt-5.4__user-gpt-4.1.json",
    "t2old__lb-openai__gpt-oss-120b-langchain__user-gpt-oss-120b.json",
)


def _trajectories() -> Path:
    here = Path(__file__).resolve()
    return next(
        (p / "shared" / "trajectories" for p in here.parents if (p / "shared").is_dir()), here
    )


def big_run(files: list[Path], sims: int) -> Results:
    """``sims`` simulations cycled from ``files`` (tasks of the first), trials renumbered."""
    runs = [Results.load(f) for f in files]
    pool = [s for r in runs for s in r.simulations]
    trials: Counter[str] = Counter()
    out = []
    for i in range(sims):
        sim = copy.deepcopy(pool[i % len(pool)])
        sim["trial"] = trials[sim["task_id"]]
        sim["id"] = f"{sim.get('id')}-{i}"
        trials[sim["task_id"]] += 1
        out.append(sim)
    info = dict(runs[0].info, num_trials=max(trials.values()))
    return Results(info=info, tasks=runs[0].tasks, simulations=out)


def measure_in_browser(page: Path, key: str) -> dict[str, float]:
    """Open ``page`` from disk in headless Chromium: when the list is drawn, how long opening
    the simulation ``key`` and the first search take (by the page's own clock)."""
    from airline_gym.testing.browser import headless_chromium

    driver = headless_chromium()
    try:
        started = time.perf_counter()
        driver.get(page.as_uri())
        ready = _until(driver, "return document.body.dataset.readyMs")
        wall = time.perf_counter() - started
        before = driver.execute_script(
            "location.hash = arguments[0]; return performance.now()", key
        )
        shown = _until(driver, "return document.getElementById('sim-view').dataset.renderedMs")
        searched = driver.execute_async_script(
            """const done = arguments[arguments.length - 1];
            location.hash = "";
            const t0 = performance.now(), before = document.body.dataset.filtered;
            const box = document.getElementById("f-text");
            box.value = "refund"; box.dispatchEvent(new Event("input"));
            (function poll() {
              if (document.body.dataset.filtered !== before) done(performance.now() - t0);
              else setTimeout(poll, 5);
            })();"""
        )
        return {
            "ready_ms": float(ready),
            "open_ms": float(shown) - before,
            "first_search_ms": float(searched),
            "get_s": wall,
        }
    finally:
        driver.quit()


def _until(driver: Any, script: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.02)
    raise TimeoutError(script)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="results files to draw from")
    parser.add_argument("--sims", type=int, default=1000, help="simulations in the run (1000)")
    parser.add_argument("--keep", type=Path, help="also keep the report here")
    args = parser.parse_args(argv)
    files = args.files or [_trajectories() / name for name in _DEFAULT]
    with tempfile.TemporaryDirectory() as folder:
        results_path = Path(folder) / "big.json"
        big_run(files, args.sims).save(results_path)
        page = Path(args.keep or Path(folder) / "big.html")
        started = time.perf_counter()
        write_report([results_path], page)
        build = time.perf_counter() - started
        figures: dict[str, Any] = {
            "simulations": args.sims,
            "results_mb": round(results_path.stat().st_size / 1e6, 2),
            "report_mb": round(page.stat().st_size / 1e6, 2),
            "build_s": round(build, 2),
        }
        figures.update(measure_in_browser(page, "task-14-trial-3"))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
