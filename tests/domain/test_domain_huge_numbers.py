"""Huge numbers reach the tools and the gold DB without an exception (issue 11.1)."""

from __future__ import annotations

import json
from pathlib import Path

from airline_gym.domain.database import PRISTINE_DB_HASH
from airline_gym.domain.grading import grade
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.toolbox import execute
from airline_gym.domain.validation import short_repr
from airline_gym.env import AirlineEnv

USER = "omar_rossi_1241"


def test_execute_refuses_huge_amounts_with_an_error_result(base) -> None:
    db = base.fork()
    for amount in (10**401, -(10**401), 10**5000):
        result = execute(db, "send_certificate", {"user_id": USER, "amount": amount})
        assert result.error and result.content.startswith("Error: invalid arguments")
    huge_json = f'{{"user_id": "{USER}", "amount": {"1" * 5000}}}'
    result = execute(db, "send_certificate", huge_json)
    assert result.error and "too large" in result.content
    assert db.hash() == PRISTINE_DB_HASH


def test_short_repr_describes_huge_ints_instead_of_raising() -> None:
    text = short_repr({"amount": [10**5000]})
    assert "digit number" in text and len(text) <= 60


def test_gold_action_with_a_huge_amount_in_a_custom_task_file(tmp_path: Path, tau2_tasks) -> None:
    record = tau2_tasks["17"].raw
    record["id"] = "huge"
    record["evaluation_criteria"]["actions"] = [
        {
            "action_id": "huge_0",
            "name": "send_certificate",
            "arguments": {"user_id": USER, "amount": 10**401},
        }
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([record]))
    task_set = load_task_set(path)
    task = task_set["huge"]
    env = AirlineEnv(tasks=path, task="huge", user="scripted")
    env.reset(seed=0)
    # the gold action fails (as the reference's pydantic model refuses it): the gold DB is the
    # pristine one, so doing nothing and ending scores 1
    _, reward, terminated, _, info = env.step({"name": "done", "arguments": {}})
    assert terminated and reward == 1.0 and info["reward_info"]["db_match"]
    g = grade(task, base_view := env.base.fork(), [], "agent_stop")
    assert g.reward == 1.0 and base_view.hash() == PRISTINE_DB_HASH


def test_task_file_with_a_number_past_pythons_limit_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text('[{"id": "x", "n": %s}]' % ("7" * 5000))
    import pytest

    with pytest.raises(ValueError, match="not valid JSON") as caught:
        load_task_set(path)
    assert str(path.resolve()) in str(caught.value)
