"""Strict grading observes what the agent did: each check named in the grade, and each closes an
exploit (no confirmation, a bare one, write-then-undo, a repeated write, a transfer or a hang-up
instead of a refusal, a figure the customer never saw or saw among others)."""

from __future__ import annotations

import json
from typing import Any

from airline_gym.domain.database import load_pristine
from airline_gym.domain.grading import grade
from airline_gym.domain.prompts import STOP, TRANSFER
from airline_gym.domain.said import LEAVE_UNSATISFIED, READ_LIMIT
from airline_gym.domain.task_meta import STRICT_CHECK_NAMES
from airline_gym.domain.tasks import Task
from airline_gym.domain.toolbox import execute

RID = "PGAGLM"  # isabella_muller_2311's business reservation, not flown
CANCEL = {"name": "cancel_reservation", "arguments": {"reservation_id": RID}}
READ = {"name": "get_reservation_details", "arguments": {"reservation_id": RID}}
PROPOSAL = f"I'll cancel reservation {RID}; the refund goes to the original payment. Shall I?"
YES = "Yes, please go ahead."
DONE = "Thank you! That's everything, thank you. " + STOP


def task(actions: list[dict[str, Any]], say: list[str] | None = None, checks: Any = None) -> Task:
    gold = [{"action_id": str(i), **a, "info": None} for i, a in enumerate(actions)]
    return Task(
        "t",
        {
            "id": "t",
            "evaluation_criteria": {
                "actions": gold,
                "communicate_info": say or [],
                "nl_assertions": [],
                "reward_basis": ["DB", "COMMUNICATE"],
            },
            "airline_gym": {"checks": list(STRICT_CHECK_NAMES) if checks is None else checks},
        },
    )


class Talk:
    """A transcript in OpenAI format, with the DB its writes leave."""

    def __init__(self) -> None:
        self.db = load_pristine().fork()
        self.messages: list[dict[str, Any]] = [{"role": "assistant", "content": "Hi!"}]
        self.n = 0

    def agent(self, text: str) -> Talk:
        self.messages.append({"role": "assistant", "content": text})
        return self

    def user(self, text: str) -> Talk:
        self.messages.append({"role": "user", "content": text})
        return self

    def call(self, name: str, arguments: dict[str, Any], text: str | None = None) -> Talk:
        self.n += 1
        call_id = f"c{self.n}"
        function = {"name": name, "arguments": json.dumps(arguments)}
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        result = execute(self.db, name, dict(arguments))
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result.content})
        return self

    def grade(self, t: Task, ending: str = "user_stop") -> dict[str, Any]:
        g = grade(t, self.db, self.messages, ending)
        return {"reward": g.reward, **{c.name: c.met for c in g.strict_checks}, "note": g.note}


def confirmed_cancel() -> Talk:
    return Talk().user("Cancel PGAGLM.").agent(PROPOSAL).user(YES).call(**CANCEL)


def test_a_confirmed_write_and_a_settled_customer_score_one() -> None:
    got = confirmed_cancel().agent(f"{RID} has been cancelled.").user(DONE).grade(task([CANCEL]))
    assert got["reward"] == 1.0 and all(got[n] for n in STRICT_CHECK_NAMES)


def test_a_write_without_a_yes_or_after_a_bare_question_is_unconfirmed() -> None:
    unasked = Talk().user("Cancel PGAGLM.").call(**CANCEL).agent("Done.").user(DONE)
    assert unasked.grade(task([CANCEL]))["CONFIRMED"] is False
    bare = Talk().user("Cancel PGAGLM.").agent("Shall I proceed?").user(YES).call(**CANCEL)
    got = bare.agent("Done.").user(DONE).grade(task([CANCEL]))
    assert got["reward"] == 0.0 and got["CONFIRMED"] is False
    assert "names no reservation PGAGLM, the cancellation" in got["note"]


def test_the_yes_must_answer_the_proposal_the_customer_saw() -> None:
    # the details beside a tool call never reach the customer
    hidden = Talk().user("Cancel PGAGLM.").call(**READ, text=PROPOSAL).agent("Shall I proceed?")
    got = hidden.user(YES).call(**CANCEL).agent("Done.").user(DONE).grade(task([READ, CANCEL]))
    assert got["CONFIRMED"] is False


def test_write_then_undo_and_repeated_writes_are_writes() -> None:
    record = load_pristine().fork().reservation(RID)
    assert record is not None
    people = [dict(p) for p in record["passengers"]]
    renamed = [dict(p, first_name=p["first_name"] + "a") for p in people]
    update = "update_reservation_passengers"
    undo = Talk().user("Cancel PGAGLM.")
    undo.call(update, {"reservation_id": RID, "passengers": renamed})
    undo.call(update, {"reservation_id": RID, "passengers": people})
    got = undo.agent("Unfortunately I cannot cancel it.").user(DONE).grade(task([READ]))
    assert got["reward"] == 0.0 and got["WRITES"] is False and got["CONFIRMED"] is False
    twice = confirmed_cancel().call(**CANCEL).agent("Cancelled.").user(DONE)
    got = twice.grade(task([CANCEL]))
    assert got["CONFIRMED"] is False and "made again on a yes" in got["note"]


def test_transfer_or_hang_up_instead_of_a_refusal_scores_zero() -> None:
    summary = {"summary": "The customer wants to cancel."}
    handed = Talk().user("Cancel PGAGLM.").call(**READ).call("transfer_to_human_agents", summary)
    handed.agent("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.").user(TRANSFER)
    got = handed.grade(task([READ]))
    assert got["WRITES"] is False and got["SETTLED"] is False
    said_only = Talk().user("Cancel PGAGLM.").call(**READ)
    said_only.agent("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.").user(TRANSFER)
    assert said_only.grade(task([READ]))["SETTLED"] is False
    hung_up = Talk().user("Cancel PGAGLM.").call(**READ)
    assert hung_up.grade(task([READ]), "agent_stop")["SETTLED"] is False
    refused = Talk().user("Cancel PGAGLM.").call(**READ).agent("Sorry, it doesn't qualify.")
    assert refused.user("I understand. " + STOP).grade(task([READ]))["reward"] == 1.0


def test_a_customer_that_leaves_unhappy_is_not_settled() -> None:
    for why in LEAVE_UNSATISFIED:
        stalled = Talk().user("Cancel PGAGLM.").call(**READ).agent("One moment.")
        got = stalled.user(f"{why} Never mind, goodbye. {STOP}").grade(task([READ]))
        assert got["reward"] == 0.0 and got["SETTLED"] is False


def test_a_figure_counts_only_seen_and_alone() -> None:
    t = task([READ], say=["1234"])
    seen = Talk().user("How much?").call(**READ).agent("It comes to $1,234 in all.")
    assert seen.user(DONE).grade(t)["ANSWERED"] is True
    hidden = Talk().user("How much?").call(**READ, text="The figure is $1234.")
    got = hidden.agent("Sorry, I cannot share that.").user(DONE).grade(t)
    assert got["ANSWERED"] is False and got["reward"] == 0.0
    listed = Talk().user("How much?").call(**READ).agent("It is one of $1000, $1234, $2000.")
    assert listed.user(DONE).grade(t)["ANSWERED"] is False


def test_only_the_checks_a_task_lists_apply_and_an_own_basis_is_the_reference_grade() -> None:
    unasked = Talk().user("Cancel PGAGLM.").call(**CANCEL).agent("Done.").user(DONE)
    assert unasked.grade(task([CANCEL], checks=[]))["reward"] == 1.0
    only = grade(task([CANCEL], checks=["WRITES"]), unasked.db, unasked.messages, "user_stop")
    assert [c.name for c in only.strict_checks] == ["WRITES"] and only.reward == 1.0
    own = grade(task([CANCEL]), unasked.db, unasked.messages, "user_stop", ["DB"])
    assert own.reward == 1.0 and own.strict_checks == ()


def test_what_the_customer_did_not_read_was_not_seen() -> None:
    padded = "x " * (READ_LIMIT // 2) + "The total is $1234."
    t = task([READ], say=["1234"])
    late = Talk().user("How much?").call(**READ).agent(padded).user(DONE)
    assert late.grade(t)["ANSWERED"] is False
    late_proposal = "x " * (READ_LIMIT // 2) + PROPOSAL
    got = Talk().user("Cancel PGAGLM.").agent(late_proposal).user(YES).call(**CANCEL)
    assert got.agent("Done.").user(DONE).grade(task([CANCEL]))["CONFIRMED"] is False


def test_a_task_listing_an_unknown_check_is_refused_in_one_line() -> None:
    import pytest

    from airline_gym.domain.task_checks import check_task
    from airline_gym.errors import ConfigError

    record = {"id": "t", "evaluation_criteria": {}, "airline_gym": {"checks": ["WRITES", "NOPE"]}}
    with pytest.raises(ConfigError, match="unknown check 'NOPE'") as info:
        check_task(record, "tasks.json")
    assert "\n" not in str(info.value)
    check_task(dict(record, airline_gym={"checks": list(STRICT_CHECK_NAMES)}), "tasks.json")
