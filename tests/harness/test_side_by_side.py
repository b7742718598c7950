"""Two runs side by side (issue 27, B9-B10): report refuses a pair that compare refuses (one
check, one wording) unless --allow-different, and then says how they differ; the overview's
basis counts say what they count; compare warns when too few tasks are shared for its interval
to mean anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.report.overview import describe_run
from airline_gym.harness.results import Results
from airline_gym.harness.results.compare import MIN_TASKS


def run(*args: str) -> tuple[int, str, str]:
    """``airline-gym ARGS`` in this process: (exit code, stdout, stderr)."""
    done = run_cli(*args)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(gold on 2 tasks, noop on the same 2 (it fails both), that noop run labelled tau3)."""
    folder = tmp_path_factory.mktemp("pair")
    paths = []
    for agent in ("gold", "noop"):
        path = folder / f"{agent}.json"
        evaluate(agent, EvalConfig(task_ids=["2", "3"]), out=path)
        paths.append(path)
    data = json.loads(paths[1].read_text())
    data["info"]["benchmark"] = "tau3"
    tau3 = folder / "tau3.json"
    tau3.write_text(json.dumps(data), encoding="utf-8")
    return paths[0], paths[1], tau3


def test_report_refuses_the_pair_compare_refuses(runs: tuple[Path, Path, Path], tmp_path: Path):
    gold, _, tau3 = runs
    page = tmp_path / "pair.html"
    code, _, compare_err = run("compare", str(gold), str(tau3))
    assert code == 2
    code, _, report_err = run("report", str(gold), str(tau3), "-o", str(page))
    assert code == 2 and not page.exists()
    expected = compare_err.replace("airline-gym compare:", "airline-gym report:")
    assert report_err == expected and "the runs differ in benchmark: A tau2, B tau3" in report_err
    code, _, err = run("report", str(gold), str(tau3), "-o", str(page), "--allow-different")
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "These runs differ besides the agent" in html and "benchmark: A tau2, B tau3" in html


def test_the_basis_count_says_what_it_counts(runs: tuple[Path, Path, Path]) -> None:
    rows = dict(describe_run(Results.load(runs[0])))
    assert rows["reward basis"] == "each task's own: DB x COMMUNICATE (2 simulations)"


def test_compare_warns_with_too_few_tasks(runs: tuple[Path, Path, Path]) -> None:
    gold, noop, _ = runs
    code, stdout, _ = run("compare", str(gold), str(noop))
    assert code == 0
    lines = stdout.strip().splitlines()
    assert lines[-2] == "verdict (pass^1): A is better"
    assert lines[-1].startswith(
        f"warning: only 2 task(s) in both runs: with fewer than {MIN_TASKS}"
    )
    code, stdout, _ = run("compare", str(gold), str(noop), "--json")
    assert json.loads(stdout)["warning"].startswith("only 2 task(s)")


def test_enough_tasks_give_no_warning(tmp_path: Path) -> None:
    ids = [str(i) for i in range(MIN_TASKS)]
    paths = []
    for agent in ("gold", "noop"):
        path = tmp_path / f"{agent}.json"
        evaluate(agent, EvalConfig(task_ids=ids), out=path)
        paths.append(path)
    code, stdout, _ = run("compare", *map(str, paths), "--json")
    assert code == 0 and json.loads(stdout)["warning"] is None
