"""An eval of generated tasks reads like a training report: pass^1 by kind, outcome, bin and DB
effect with intervals, in the terminal summary, ``--json``, ``compare`` and the HTML report;
task ids in natural order; a large run lists no task per line."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from airline_gym.harness.results import Results, bootstrap_interval
from airline_gym.harness.results.breakdown import DIMENSIONS, breakdown, task_labels
from tests.cli_runner import cli

N = 500


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, tau3_for_module: None) -> dict[str, Path]:
    """500 tasks graded as the benchmark grades (doing nothing passes most unchanged-DB ones),
    and the do-nothing agent on them: a run with pass rates that differ by group."""
    folder = tmp_path_factory.mktemp("breakdown")
    tasks, out = folder / "tasks.json", folder / "noop.json"
    made = cli("generate", "--n", N, "--seed", 1, "--grading", "benchmark", "--out", tasks)
    assert made.returncode == 0, made.stderr
    done = cli("eval", "--agent", "noop", "--tasks", tasks, "--out", out, "--concurrency", 4)
    assert done.returncode == 0, done.stderr
    (folder / "stdout.txt").write_text(done.stdout)
    return {"tasks": tasks, "out": out, "stdout": folder / "stdout.txt"}


def expected(results: Results) -> dict[str, dict[str, float]]:
    """pass^1 per group, computed here from the tasks' labels and the recorded rewards."""
    reward = {s["task_id"]: s["reward_info"]["reward"] for s in results.simulations}
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for task in results.tasks:
        for dimension, labels in task_labels(task).items():
            for label in labels:
                groups[dimension][label].append(float(reward[task["id"]] == 1.0))
    return {d: {k: sum(v) / len(v) for k, v in by.items()} for d, by in groups.items()}


@pytest.mark.long  # ~25 s: 500 tasks generated and played
def test_the_summary_gives_pass_rates_by_kind_outcome_bin_and_db(run: dict[str, Path]) -> None:
    text = run["stdout"].read_text()
    results = Results.load(run["out"])
    want = expected(results)
    assert 0 < want["db"]["unchanged"] < 1 and want["db"]["changes"] == 0  # a mixed run
    assert "successes per task: 500 tasks (each in --json and the HTML report)" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    for dimension in DIMENSIONS:
        block = text.split(f"  by {dimension}:\n", 1)[1]
        for label, rate in want[dimension].items():
            line = re.search(rf"^    {re.escape(label)} +(\S+) \[(\S+), (\S+)\]", block, re.M)
            assert line, (dimension, label)
            assert float(line.group(1)) == pytest.approx(rate, abs=5e-4)
            assert float(line.group(2)) <= rate <= float(line.group(3))


@pytest.mark.long  # the same run
def test_json_compare_and_the_report_carry_the_same_groups(
    run: dict[str, Path], tmp_path: Path
) -> None:
    results = Results.load(run["out"])
    want = expected(results)
    summary = json.loads(
        cli("eval", "--agent", "noop", "--tasks", run["tasks"], "--out", run["out"], "--resume",
            "--json").stdout
    )  # fmt: skip
    groups = summary["breakdown"]
    assert {d: {k: v["pass_hat_1"] for k, v in by.items()} for d, by in groups.items()} == {
        d: pytest.approx(by) for d, by in want.items()
    }
    ids = list(summary["task_successes"])
    assert ids == [f"g1_{i}" for i in range(N)]  # natural order: g1_2 before g1_10
    compared = cli("compare", run["out"], run["out"])
    assert compared.returncode == 0, compared.stderr
    assert "  by outcome:" in compared.stdout and "B - A +0.000" in compared.stdout
    page = tmp_path / "r.html"
    assert cli("report", run["out"], "-o", page).returncode == 0
    html = page.read_text()
    for dimension, labels in want.items():
        table = html.split(f'data-dimension="{dimension}"', 1)[1].split("</table>", 1)[0]
        for label, rate in labels.items():
            assert f'<td data-pass="{label}">{rate:.3f}</td>' in table
            assert f'aria-label="{label}: pass^1 {rate:.3f}"' in table  # its bar in the chart


def test_a_group_is_the_mean_of_its_tasks_with_a_bootstrap_interval() -> None:
    tasks = [
        {"id": "a", "airline_gym": {"kinds": ["cancel", "book"], "outcomes": ["refused", "granted"],
                                    "bins": ["cancel/refused", "book"], "changes_db": True}},
        {"id": "b", "airline_gym": {"kinds": ["cancel"], "outcomes": ["granted"],
                                    "bins": ["cancel/24h"], "changes_db": True}},
        {"id": "c", "airline_gym": {"kinds": ["info"], "outcomes": ["granted"], "bins": ["info"],
                                    "changes_db": False}},
        {"id": "unplayed", "airline_gym": {"kinds": ["book"]}},
        {"id": "benchmark-task"},
    ]  # fmt: skip
    groups = breakdown(tasks, {"a": (1, 2), "b": (2, 2), "c": (0, 2), "benchmark-task": (1, 1)})
    cancel = groups["kind"]["cancel"]
    interval = bootstrap_interval([0.5, 1.0])
    assert cancel == {"tasks": 2, "simulations": 4, "successes": 3, "pass_hat_1": 0.75,
                      "low": interval.low, "high": interval.high}  # fmt: skip
    assert groups["kind"]["book"]["tasks"] == 1  # the unplayed task is not counted
    assert groups["db"] == {
        "changes": {**cancel},
        "unchanged": {"tasks": 1, "simulations": 2, "successes": 0, "pass_hat_1": 0.0,
                      "low": 0.0, "high": 0.0},
    }  # fmt: skip
    assert breakdown([{"id": "x"}], {"x": (1, 1)}) == {}  # the benchmark's tasks carry no labels
