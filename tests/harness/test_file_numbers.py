"""What a results file's values can do to compare, report and regrade (issue 27, B11-B13):
a simulation written twice is refused, never counted as another trial; NaN, Infinity and
numbers too large for a float are refused in one line; a huge trial number sizes nothing
(checked in a child process under a small memory cap)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli

from airline_gym.harness.evaluate import EvalConfig, evaluate

CAP_BYTES = 1536 * 2**20  # address space of the child that writes the report


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A do-nothing run of two tasks, one trial: task 0 passes, task 1 fails."""
    out = tmp_path_factory.mktemp("numbers") / "noop.json"
    evaluate("noop", EvalConfig(task_ids=["0", "1"]), out=out)
    return out


def _variant(run_file: Path, tmp_path: Path, name: str, change: Any) -> Path:
    data = json.loads(run_file.read_text())
    change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_a_simulation_written_four_times_is_refused(run_file: Path, tmp_path: Path) -> None:
    def quadruple(data: dict[str, Any]) -> None:
        data["simulations"] = [s for s in data["simulations"] for _ in range(4)]
        data["info"]["num_trials"] = 4

    copies = _variant(run_file, tmp_path, "copies.json", quadruple)
    done = cli("compare", str(run_file), str(copies))
    _one_line_exit_2(done, "copies.json", "simulations 0 and 1", "written twice")
    done = cli("report", str(copies), "-o", str(tmp_path / "page.html"))
    _one_line_exit_2(done, "written twice")
    assert not (tmp_path / "page.html").exists()


def test_the_same_task_and_trial_under_two_ids_is_refused(run_file: Path, tmp_path: Path) -> None:
    def relabel(data: dict[str, Any]) -> None:
        data["simulations"][1]["task_id"] = data["simulations"][0]["task_id"]

    twice = _variant(run_file, tmp_path, "twice.json", relabel)
    _one_line_exit_2(cli("compare", str(twice), str(run_file)), 'both task "0" trial 0')


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_reward_is_refused_in_one_line(
    run_file: Path, tmp_path: Path, number: str
) -> None:
    text = run_file.read_text()
    path = tmp_path / "nan.json"
    path.write_text(text.replace('"reward": 1.0', f'"reward": {number}', 1), encoding="utf-8")
    assert path.read_text() != text
    for command in (
        ["compare", str(run_file), str(path)],
        ["report", str(path), "-o", str(tmp_path / "nan.html")],
        ["regrade", str(path)],
    ):
        _one_line_exit_2(cli(*command), "nan.json", "not a JSON number")


def test_a_huge_trial_number_sizes_nothing(run_file: Path, tmp_path: Path) -> None:
    def huge(data: dict[str, Any]) -> None:
        data["simulations"][1]["trial"] = 2_000_000

    path = _variant(run_file, tmp_path, "huge.json", huge)
    page = tmp_path / "huge.html"
    child = textwrap.dedent(
        f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({CAP_BYTES}, {CAP_BYTES}))
        from airline_gym.cli.main import main
        sys.exit(main(["report", {str(path)!r}, "-o", {str(page)!r}]))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert page.stat().st_size < 2_000_000
    html = page.read_text(encoding="utf-8")
    assert 'href="#task-1-trial-2000000"' in html
