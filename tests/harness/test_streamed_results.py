"""An eval keeps no simulation in memory (issue 35, 21): it journals each one and keeps where it
is, writes the results file from there, and the results it returns read the file when used. The
journal, ``--resume`` and every reader of the file are as exact as before."""

from __future__ import annotations

import gc
import json
import pickle
import tracemalloc
from pathlib import Path
from typing import Any

from cli_runner import run_cli

from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.results import Results, summarize

PER_EPISODE_BOUND = 1024  # bytes an eval may keep per finished episode (it kept 11-34 KB)


def test_an_evals_memory_does_not_grow_with_its_episodes(tmp_path: Path) -> None:
    """Traced memory after 60 episodes (every task played once: what is worked out per task is
    in) and after 145 (and once the file is written and the results returned): under 1 KiB
    more per episode. Keeping the simulations, as before, costs 11 KB per do-nothing episode
    here and 34 KB per random one."""
    first, later = 60, 145
    traced: dict[str, int] = {}

    def progress(sim: Any, done: int, total: int, results: Results) -> None:
        if done in (first, later):
            gc.collect()
            traced[str(done)] = tracemalloc.get_traced_memory()[0]

    tracemalloc.start()
    try:
        results = evaluate("noop", EvalConfig(trials=3), out=tmp_path / "r.json", progress=progress)
        gc.collect()
        traced["end"] = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    during = (traced[str(later)] - traced[str(first)]) / (later - first)
    after = (traced["end"] - traced[str(first)]) / (150 - first)
    assert during < PER_EPISODE_BOUND, f"{during:.0f} bytes kept per episode during the run"
    assert after < PER_EPISODE_BOUND, f"{after:.0f} bytes kept per episode by the end"
    summary = summarize(results)  # read from the file, one simulation at a time
    assert summary["simulations"] == 150 and summary == summarize(Results.load(tmp_path / "r.json"))


def test_the_returned_results_are_the_files_and_outlive_a_later_run_on_it(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    config = EvalConfig(task_ids=["0", "1", "2"], trials=1)
    first = evaluate("noop", config, out=out)
    assert list(first.simulations) == Results.load(out).simulations
    assert first.simulations[-1] == first.simulations[2] and first.simulations[:2] == [
        first.simulations[0],
        first.simulations[1],
    ]
    kept = list(first.simulations)
    grown = evaluate("noop", EvalConfig(task_ids=["0", "1", "2"], trials=2), out=out, resume=True)
    assert list(first.simulations) == kept  # the first run's, though its file was replaced
    assert len(grown.simulations) == 6 and list(grown.simulations) == Results.load(out).simulations
    copied = pickle.loads(pickle.dumps(grown))  # a copy holds the simulations themselves
    assert isinstance(copied.simulations, list) and copied.simulations == list(grown.simulations)
    first.simulations[0]["task_id"] = "edited"
    assert first.simulations[0]["task_id"] == "0"  # each read is a fresh object


def test_resume_of_a_results_file_in_another_layout(tmp_path: Path) -> None:
    """A results file re-written by another tool (indented JSON) is read whole, set aside out of
    memory, and resumed exactly; nothing is left beside it."""
    out = tmp_path / "r.json"
    evaluate("noop", EvalConfig(task_ids=["0", "1"], trials=1), out=out)
    data = json.loads(out.read_text(encoding="utf-8"))
    out.write_text(json.dumps(data, indent=2), encoding="utf-8")
    grown = evaluate("noop", EvalConfig(task_ids=["0", "1"], trials=2), out=out, resume=True)
    sims = Results.load(out).simulations
    assert sims[0] == data["simulations"][0] and sims[2] == data["simulations"][1]
    assert [(s["task_id"], s["trial"]) for s in sims] == [("0", 0), ("0", 1), ("1", 0), ("1", 1)]
    assert list(grown.simulations) == sims
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_every_reader_tells_the_grade_of_a_resumed_streamed_run(tmp_path: Path) -> None:
    """The chain: an eval killed after some episodes (its journal), resumed; then regrade,
    compare, report and audit-user read the file it wrote and tell the same grade."""
    out = tmp_path / "run.json"
    whole = evaluate("gold", EvalConfig(task_ids=["0", "1", "2", "3"]), out=tmp_path / "w.json")
    header = {"timestamp": whole.timestamp, "info": whole.info, "tasks": whole.tasks}
    lines = [json.dumps(header), *(json.dumps(s) for s in whole.simulations[:2])]
    out.with_name("run.json.journal").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_cli(
        "eval", "--agent", "gold", "--task-ids", "0,1,2,3", "--trials", "2", "--out", str(out),
        "--resume", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    saved = Results.load(out)
    assert summary["simulations"] == len(saved.simulations) == 8
    assert summary["pass_hat_k"] == {str(k): v for k, v in summarize(saved)["pass_hat_k"].items()}
    regraded = run_cli("regrade", str(out), "--summary")
    assert regraded.returncode == 0, regraded.stderr
    assert regraded.stderr.strip().splitlines()[-1] == "agreement: 8/8 simulations"
    compared = run_cli("compare", str(out), str(out), "--json")
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["pass_hat_k_a"]["1"] == summary["pass_hat_k"]["1"]
    page = tmp_path / "run.html"
    reported = run_cli("report", str(out), "-o", str(page))
    assert reported.returncode == 0, reported.stderr
    html = page.read_text(encoding="utf-8")
    assert 'data-figure="simulations">8<' in html
    assert f'data-figure="successes">{summary["successes"]}<' in html
