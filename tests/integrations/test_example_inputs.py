"""The rollout examples take the CLI's option names, and bad input is one line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from optional_libs import require

from tests.conftest import need_shared_tau3

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GRPO = ["grpo_rollouts.py", "--model", "openai/x", "--api-base", "http://127.0.0.1:9/v1"]
RAY = ["ray_rollouts.py"]


def _run(
    script: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})},
    )


@pytest.mark.parametrize("example", [GRPO, RAY], ids=["grpo", "ray"])
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--task-ids", "99"], "error: no task '99' in task set 'tau2'"),
        (["--tasks", "/no/such/tasks.json"], "error: tasks file not found: /no/such/tasks.json"),
        (["--benchmark", "tau3", "--task-ids", "99"], "error: no task '99' in task set 'tau3'"),
        (["--benchmark", "tau3", "--tasks", "tau2"], "error: task set 'tau2' belongs to benchmark"),
    ],
)
def test_bad_input_is_one_line(
    example: list[str], args: list[str], says: str, tmp_path: Path
) -> None:
    if example is RAY:
        require("ray")  # the script imports the Ray integration first
    if "tau3" in args:
        need_shared_tau3()  # the tau3 files at hand: never downloaded by the tests
    done = _run(*example, *args, "--out", str(tmp_path / "o.jsonl"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith(says), done.stderr
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("example", [GRPO, RAY], ids=["grpo", "ray"])
def test_a_bad_benchmark_is_one_line_as_in_the_cli(example: list[str], tmp_path: Path) -> None:
    if example is RAY:
        require("ray")
    done = _run(*example, "--benchmark", "tau4", "--out", str(tmp_path / "o.jsonl"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "error: argument --benchmark: invalid choice: 'tau4'" in done.stderr


@pytest.mark.parametrize("script", ["grpo_rollouts.py", "ray_rollouts.py"])
def test_the_examples_take_the_clis_option_names(script: str) -> None:
    if script == "ray_rollouts.py":
        require("ray")
    text = _run(script, "--help").stdout
    assert "--task-ids TASK_IDS" in text and "--tasks PATH" in text and "--task-set" not in text
    assert "--benchmark {tau2,tau3}" in text  # as eval, audit, tasks, show and play take it


def test_ray_example_without_a_cluster_at_auto_is_one_line(tmp_path: Path) -> None:
    require("ray")
    env = {"RAY_TMPDIR": str(tmp_path), "TMPDIR": str(tmp_path), "RAY_ADDRESS": ""}
    done = _run(
        *RAY, "--address", "auto", "--task-ids", "17", "--out", str(tmp_path / "o"), env=env
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.startswith("error: ")]
    assert lines == [done.stderr.strip().splitlines()[-1]]
    assert "Could not find any running Ray instance" in lines[0]
