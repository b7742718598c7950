"""Custom task files: no task is dropped for lack of a split (issue 11.5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from airline_gym.domain.tasks import load_task_set
from airline_gym.env import AirlineEnv
from airline_gym.harness.evaluate import EvalConfig, evaluate


@pytest.fixture
def custom_file(tmp_path: Path, tau2_tasks) -> Path:
    records = []
    for new_id, old_id in (("alpha", "17"), ("beta", "3")):
        record = tau2_tasks[old_id].raw
        record["id"] = new_id
        records.append(record)
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(records))
    return path


def test_ids_unknown_to_tau2_make_one_split_with_every_task(custom_file: Path) -> None:
    task_set = load_task_set(custom_file)
    assert dict(task_set.splits) == {"base": ("alpha", "beta")}
    assert [t.id for t in task_set.split("base")] == ["alpha", "beta"]
    with pytest.raises(ValueError, match="choose from base"):
        task_set.split("train")


def test_env_without_a_task_draws_from_all_custom_tasks(custom_file: Path) -> None:
    env = AirlineEnv(tasks=custom_file, user="scripted")
    seen = {env.reset(seed=seed)[1]["task_id"] for seed in range(12)}
    assert seen == {"alpha", "beta"}


def test_evaluate_runs_every_custom_task(custom_file: Path) -> None:
    results = evaluate("gold", EvalConfig(tasks=custom_file))
    assert sorted(s["task_id"] for s in results.simulations) == ["alpha", "beta"]
    assert all(s["reward_info"]["reward"] == 1.0 for s in results.simulations)


def test_tasks_command_lists_every_custom_task(custom_file: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", "tasks", "--tasks", str(custom_file), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert [t["id"] for t in json.loads(out)] == ["alpha", "beta"]


def test_a_file_with_tau2_ids_keeps_tau2_splits(tmp_path: Path, tau2_tasks) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([tau2_tasks[i].raw for i in ("2", "17")]))
    task_set = load_task_set(path)
    assert task_set.splits["train"] == ("17",) and task_set.splits["test"] == ("2",)


def test_split_file_beside_the_tasks_wins(custom_file: Path) -> None:
    (custom_file.parent / "split_tasks.json").write_text(json.dumps({"train": ["beta"]}))
    task_set = load_task_set(custom_file)
    assert task_set.splits["train"] == ("beta",)
    assert task_set.splits["base"] == ("alpha", "beta")


def test_a_task_without_an_id_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"user_scenario": {}}]))
    with pytest.raises(ValueError, match=r"task #1 has no 'id'"):
        load_task_set(path)


def test_a_file_rewritten_under_the_same_name_loads_anew(custom_file: Path, tau2_tasks) -> None:
    """A long-lived process (serve, a notebook) that loads a path again sees the file as it is
    now, not the task set cached when it was first read; an unchanged file is not re-read."""
    first = load_task_set(custom_file)
    assert load_task_set(custom_file) is first
    record = tau2_tasks["5"].raw
    record["id"] = "gamma"
    custom_file.write_text(json.dumps([record]))
    assert list(load_task_set(custom_file).tasks) == ["gamma"]
