"""warm-start reports every task it leaves out, with why (issue 33): never a silent drop. On
generated tasks the gold dialogue scores 1 everywhere, including a question asked before a
hand-off; the bare gold calls (no confirmation, no word to the customer) are left out under
strict grading, each with its failed check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airline_gym.harness.warm_start import warm_start
from airline_gym.taskgen.generate import generate
from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("tau3_for_module")  # generating reads tau3's task file


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = generate(
        16, 8, kinds=["info", "cancel/flown", "change_cabin"]
    ).records  # has the pair
    path = tmp_path_factory.mktemp("drops") / "tasks.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_the_gold_dialogue_drops_nothing_a_question_before_a_hand_off_included(
    tasks: Path, tmp_path: Path
) -> None:
    records = json.loads(tasks.read_text())
    assert any(r["airline_gym"]["bins"] == ["info", "cancel/flown"] for r in records)
    done = warm_start(tmp_path / "sft.jsonl", tasks=tasks, concurrency=1)
    assert (done.written, done.dropped, done.why) == (16, {}, {})


def test_every_dropped_task_is_listed_with_why(tasks: Path, tmp_path: Path) -> None:
    done = warm_start(tmp_path / "sft.jsonl", tasks=tasks, agent="gold", concurrency=1)
    assert done.dropped and set(done.why) == set(done.dropped)
    assert all(why for why in done.why.values())
    assert any("CONFIRMED" in why for why in done.why.values())  # writes nobody agreed to
    out = run_cli(
        "warm-start", "--tasks", str(tasks), "--agent", "gold", "--out", str(tmp_path / "b.jsonl")
    )
    assert f"left out ({len(done.dropped)}, reward below 1):" in out.stdout
    for task_id, why in done.why.items():
        assert f"  {task_id} (0): {why}" in out.stdout
