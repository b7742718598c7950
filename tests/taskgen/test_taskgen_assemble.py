"""Assembly of task records from hand-made decisions: tau2's shape, the two gradings, the
assertions, and the records load in tau2's own ``Task`` model and in ours."""

from __future__ import annotations

import json

import pytest

from airline_gym.domain.decisions import Call, Decision, Solution
from airline_gym.domain.intents import Intent, Request
from airline_gym.domain.tasks import parse_tasks
from airline_gym.taskgen.assemble import assemble, gold_actions

USER = "mia_li_3668"
READ_USER = Call("get_user_details", {"user_id": USER})
READ_RES = Call("get_reservation_details", {"reservation_id": "NO6JO3"})
INSTRUCTIONS = {
    "reason_for_call": "You want to cancel reservation NO6JO3.",
    "known_info": "You are Mia Li.\nYour user id is mia_li_3668.",
    "unknown_info": None,
    "task_instructions": "If the agent refuses, accept it.",
}


def _intent(*requests: Request) -> Intent:
    return Intent(user_id=USER, name="Mia Li", requests=requests, known={"user_id": USER})


REFUSED = (
    _intent(Request("cancel", reservation_id="NO6JO3", reason="change_of_plan")),
    Solution((Decision(0, "refused", "not eligible", reads=(READ_USER, READ_RES)),)),
)
GRANTED = (
    _intent(Request("cancel", reservation_id="NO6JO3", reason="change_of_plan")),
    Solution(
        (
            Decision(
                0,
                "granted",
                "business cabin",
                reads=(READ_USER, READ_RES),
                writes=(Call("cancel_reservation", {"reservation_id": "NO6JO3"}),),
                amount=500,
            ),
        )
    ),
)
TRANSFER = (
    _intent(Request("cancel", reservation_id="NO6JO3", reason="health")),
    Solution(
        (
            Decision(
                0,
                "transfer",
                "a segment was flown",
                reads=(READ_RES,),
                writes=(Call("transfer_to_human_agents", {"summary": "flown"}),),
            ),
        )
    ),
)
INFO = (
    _intent(Request("info", question="certificate_balance")),
    Solution((Decision(0, "granted", "", reads=(READ_USER,), say=("350",)),)),
)


def test_strict_refusal_carries_the_reads_and_action_in_its_basis() -> None:
    record = assemble("g0_0", *REFUSED, INSTRUCTIONS)
    criteria = record["evaluation_criteria"]
    assert criteria["reward_basis"] == ["DB", "COMMUNICATE", "ACTION"]
    assert [(a["name"], a["arguments"]) for a in criteria["actions"]] == [
        ("get_user_details", {"user_id": USER}),
        ("get_reservation_details", {"reservation_id": "NO6JO3"}),
    ]
    assert [a["action_id"] for a in criteria["actions"]] == ["g0_0_0", "g0_0_1"]
    assert criteria["actions"][1]["compare_args"] == ["reservation_id"]
    assert criteria["nl_assertions"] == [
        "Agent should refuse the cancellation of reservation NO6JO3 (not eligible)."
    ]
    assert record["airline_gym"]["kinds"] == ["cancel"]
    assert record["airline_gym"]["outcomes"] == ["refused"]
    assert record["airline_gym"]["changes_db"] is False
    assert Intent.from_json(record["airline_gym"]["intent"]) == REFUSED[0]


def test_strict_tasks_list_the_strict_checks_and_benchmark_ones_none() -> None:
    assert assemble("g0_0", *REFUSED, INSTRUCTIONS)["airline_gym"]["checks"] == [
        "WRITES",
        "CONFIRMED",
        "SETTLED",
        "ANSWERED",
    ]
    assert (
        "checks" not in assemble("g0_0", *REFUSED, INSTRUCTIONS, grading="benchmark")["airline_gym"]
    )


def test_benchmark_grading_keeps_only_the_writes() -> None:
    record = assemble("g0_0", *REFUSED, INSTRUCTIONS, grading="benchmark")
    assert record["evaluation_criteria"]["actions"] == []
    assert record["evaluation_criteria"]["reward_basis"] == ["DB", "COMMUNICATE"]
    granted = assemble("g0_1", *GRANTED, INSTRUCTIONS, grading="benchmark")
    assert [a["name"] for a in granted["evaluation_criteria"]["actions"]] == ["cancel_reservation"]
    assert "compare_args" not in granted["evaluation_criteria"]["actions"][0]


def test_a_task_that_changes_the_db_keeps_db_times_communicate() -> None:
    record = assemble("g0_1", *GRANTED, INSTRUCTIONS)
    criteria = record["evaluation_criteria"]
    assert criteria["reward_basis"] == ["DB", "COMMUNICATE"]
    # a write shows in the DB: the lookups behind it are not required
    assert [a["name"] for a in criteria["actions"]] == ["cancel_reservation"]
    assert record["airline_gym"]["changes_db"] is True
    assert "amount: $500" in criteria["nl_assertions"][0]


def test_a_transfer_matches_on_the_name_only_and_does_not_count_as_a_db_change() -> None:
    record = assemble("g0_2", *TRANSFER, INSTRUCTIONS)
    transfer = record["evaluation_criteria"]["actions"][-1]
    assert transfer["name"] == "transfer_to_human_agents" and transfer["compare_args"] == []
    assert record["evaluation_criteria"]["reward_basis"][-1] == "ACTION"
    assert record["airline_gym"]["changes_db"] is False
    assert "transfer the customer" in record["evaluation_criteria"]["nl_assertions"][0]


def test_information_goes_into_communicate_info() -> None:
    record = assemble("g0_3", *INFO, INSTRUCTIONS)
    assert record["evaluation_criteria"]["communicate_info"] == ["350"]
    assert "350" in record["evaluation_criteria"]["nl_assertions"][0]


def test_unknown_grading_and_wrong_decision_count_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown grading"):
        gold_actions("x", REFUSED[1], "lenient")
    with pytest.raises(ValueError, match="one decision per request"):
        assemble("x", _intent(*REFUSED[0].requests * 2), REFUSED[1], INSTRUCTIONS)


def test_tau2_and_our_loader_read_the_records() -> None:
    pytest.importorskip("tau2")
    from tau2.data_model.tasks import Task as RefTask

    records = [
        assemble(f"g0_{i}", *case, INSTRUCTIONS)
        for i, case in enumerate((REFUSED, GRANTED, TRANSFER, INFO))
    ]
    records = json.loads(json.dumps(records))
    for record in records:
        ref = RefTask.model_validate(record)
        assert [b.value for b in ref.evaluation_criteria.reward_basis] == record[
            "evaluation_criteria"
        ]["reward_basis"]
        assert not hasattr(ref, "airline_gym")
    ours = parse_tasks(records, "generated", playable=True)
    assert list(ours) == ["g0_0", "g0_1", "g0_2", "g0_3"]
    assert ours["g0_0"].reward_basis == ("DB", "COMMUNICATE", "ACTION")
