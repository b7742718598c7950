"""Gold replay of every task reproduces the reference's target DB hash and scores 1.0."""

from __future__ import annotations

import pytest

from airline_gym.domain.database import PRISTINE_DB_HASH, db_hash
from airline_gym.domain.grading import gold_db, grade
from airline_gym.domain.toolbox import execute

GREETING = {"role": "assistant", "content": "Hi! How can I help you today?"}

# spec §11: first 16 hex digits of the DB hash after the gold actions (pristine where absent)
TAU3_TARGETS = {
    "7": "0087f8266f0f2fc2",
    "8": "00766aa3e0341b49",
    "11": "1e46d540ec2e530b",
    "12": "df1e46c5aaf8af00",
    "14": "b4ea8effd45eee77",
    "15": "c9500f3100906613",
    "16": "c9500f3100906613",
    "17": "37ea6df3bdb75dc6",
    "18": "361a067372a4d57d",
    "19": "e5defef608c9ccc3",
    "20": "a561da60bcd2e87f",
    "21": "9ede9d0dc4363e33",
    "22": "37ea6df3bdb75dc6",
    "23": "b46d1bed5ba2b986",
    "24": "db03cad581503e64",
    "25": "d0579b8ae59e360f",
    "29": "55e7aa074a761cbd",
    "30": "dc171787dd84f743",
    "32": "caea57241d7ab934",
    "33": "735ba8f15206b7fb",
    "35": "e0c0bf3e578e820a",
    "37": "b659ba383c77f7e9",
    "39": "964c9e1c81f8bf25",
    "40": "96b61d516184b98e",
    "42": "768a1bf6bcedc298",
    "44": "0c7887491b21baf5",
}
TAU2_TARGETS = {
    **TAU3_TARGETS,
    "2": "d9e9d254b5cacd1e",
    "7": "7bc5a4fa21c501eb",
    "9": "7eedd06983495b2a",
    "23": "7536455e0ca5f522",
    "27": "91d3895047cd7db3",
    "29": "9ecc04e81c3dfa07",
    "33": "95b5a97e21977be3",
    "35": "9adec732713f0356",
    "37": "2c62f7389ce2f001",
    "38": "d9e9d254b5cacd1e",
    "44": "a1b4b3c043c589ef",
}
# tasks a do-nothing agent passes under the reference's grading (DB unchanged, nothing to say)
TAU2_NOOP_PASSES = 19
TAU3_NOOP_PASSES = 23


def _replay(task, base):
    db = base.fork()
    messages = [GREETING]
    for i, action in enumerate(task.actions):
        result = execute(db, action.name, action.arguments)
        assert not result.error, (task.id, action.name, result.content)
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": action.name, "arguments": action.arguments},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": result.content},
        ]
    if task.communicate_info:
        messages.append({"role": "assistant", "content": ", ".join(task.communicate_info)})
    return db, messages


@pytest.mark.parametrize(
    "task_set, targets", [("tau2_tasks", TAU2_TARGETS), ("tau3_tasks", TAU3_TARGETS)]
)
def test_gold_replay__every_task_hits_the_reference_hash_and_scores_1(
    request, base, task_set, targets
):
    tasks = request.getfixturevalue(task_set)
    assert len(tasks) == 50
    for task in tasks:
        db, messages = _replay(task, base)
        assert db_hash(db)[:16] == targets.get(task.id, PRISTINE_DB_HASH[:16]), task.id
        result = grade(task, db, messages, "agent_stop")
        assert result.reward == 1.0 and result.db_match and not result.db_diff, task.id
    assert db_hash(base) == PRISTINE_DB_HASH  # nothing leaked into the shared pristine DB


@pytest.mark.parametrize(
    "task_set, expected", [("tau2_tasks", TAU2_NOOP_PASSES), ("tau3_tasks", TAU3_NOOP_PASSES)]
)
def test_do_nothing__scores_what_the_reference_gives(request, base, task_set, expected):
    tasks = request.getfixturevalue(task_set)
    passed = []
    for task in tasks:
        result = grade(task, base.fork(), [GREETING], "agent_stop")
        unchanged = db_hash(gold_db(task, base)) == PRISTINE_DB_HASH
        assert result.reward == float(unchanged and not task.communicate_info), task.id
        passed += [task.id] if result.reward else []
    assert len(passed) == expected


def test_premature_termination__scores_zero_even_with_gold_db(base, tau2_tasks):
    task = tau2_tasks[17]
    db, messages = _replay(task, base)
    for reason in ("max_steps", "too_many_errors", "user_error", "agent_error"):
        result = grade(task, db, messages, reason)
        assert result.reward == 0.0 and result.db_match
        assert reason in result.note


def test_db_diff__names_records_fields_and_values(base, tau2_tasks):
    task = tau2_tasks[17]
    db, messages = _replay(task, base)
    # undo one of the three writes: bags back to the original count
    reservation = db.reservation_for_write("FQ8APE")
    reservation["total_baggages"] = 0
    result = grade(task, db, messages, "agent_stop")
    assert result.reward == 0.0 and not result.db_match
    texts = [str(d) for d in result.db_diff]
    assert texts == ["reservations[FQ8APE].total_baggages: expected 3, got 0"]


def test_db_check__int_versus_float_spelling_matters(base, tau2_tasks):
    task = tau2_tasks[17]
    db, messages = _replay(task, base)
    db.reservation_for_write("FQ8APE")["total_baggages"] = 3.0
    result = grade(task, db, messages, "agent_stop")
    assert not result.db_match
    assert [(d.path, d.expected, d.got) for d in result.db_diff] == [(".total_baggages", 3, 3.0)]


def test_communicate__case_insensitive_and_commas_stripped_from_agent_text(base, tau2_tasks):
    task = tau2_tasks[18]  # must say "23553"
    db, _ = _replay(task, base)

    def said(text):
        return grade(task, db, [GREETING, {"role": "assistant", "content": text}], "user_stop")

    assert said("You saved $23,553 in total.").reward == 1.0
    met = said("You saved $23,553 in total.").communicate_checks[0]
    assert met.met and met.message_index == 1
    assert said("You saved $23 553 in total.").reward == 0.0
    assert said("You saved $14,965.").reward == 0.0
