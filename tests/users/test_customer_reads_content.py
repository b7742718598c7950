"""The offline customer decides from its own wishes and the live DB (issue 33, part 1): it reads a
proposal for its details however it is worded, asks "What exactly would you do?" of a bare
question, checks its account when told a change was made, takes any negative statement as a
refusal and a stall as a stall, answers a probe the same whatever the policy decides, and never
reads the gold."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from airline_gym.agents.base import text_message
from airline_gym.agents.scripted import ScriptedAgent
from airline_gym.domain.database import load_pristine
from airline_gym.domain.flight_options import acceptable, options
from airline_gym.domain.intents import FlightRule, Leg, PaymentPart, Request, Trip
from airline_gym.domain.prompts import STOP
from airline_gym.domain.said import LEAVE_UNSATISFIED, READ_LIMIT
from airline_gym.harness.runner import run_episode
from airline_gym.users.intent_user import NOT_SEEN, VAGUE
from airline_gym.users.intent_wishes import judge, read
from tests.users.intent_tasks import write_tasks

PROPOSAL = "cancel reservation PGAGLM, the refund going back to gift_card_4033665"
CONFIRMS = (
    "Would you like me to proceed?",
    "May I make this change for you?",
    "Is that alright with you?",
    "Does that work for you?",
    "Do I have your go-ahead?",
)
REFUSALS = (
    "I'm sorry, but our policy does not allow this request.",
    "This request doesn't qualify under our airline policy.",
    "That is outside what our airline policy lets me do for you.",
    "Our airline policy rules this out, so I have to decline.",
)


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tasks(tmp_path_factory.mktemp("reads") / "tasks.json")


def talk(path: Path, task: str, *texts: str) -> list[str]:
    env = gym.make("AirlineScripted-v0", tasks=str(path), task=task)
    try:
        result = run_episode(env, ScriptedAgent([text_message(t) for t in texts]))
    finally:
        env.close()
    return [str(m["content"]) for m in result.messages if m["role"] == "user"]


@pytest.mark.parametrize("confirm", CONFIRMS)
def test_a_question_with_the_details_is_a_proposal_however_worded(
    tasks_file: Path, confirm: str
) -> None:
    assert talk(tasks_file, "cancel", f"I can {PROPOSAL}. {confirm}")[1].startswith("Yes")


def test_a_statement_with_the_details_is_a_proposal_too(tasks_file: Path) -> None:
    assert talk(tasks_file, "cancel", "I will cancel reservation PGAGLM for you.")[1].startswith(
        "Yes"
    )


@pytest.mark.parametrize("bare", ["Shall I proceed?", "Do I have your go-ahead?", "OK to go on?"])
def test_a_question_without_the_details_gets_what_exactly(tasks_file: Path, bare: str) -> None:
    replies = talk(tasks_file, "cancel", bare)
    assert replies[1] == VAGUE  # even as the agent's first message: no yes


def test_told_it_is_done_it_reads_its_account(tasks_file: Path) -> None:
    replies = talk(
        tasks_file,
        "cancel",
        "Your request has been processed.",
        "Reservation PGAGLM has been cancelled.",
        "It is all set.",
    )
    assert replies[1].startswith(NOT_SEEN) and replies[2].startswith(NOT_SEEN)
    assert replies[3].startswith(LEAVE_UNSATISFIED[1]) and STOP in replies[3]


@pytest.mark.parametrize("refusal", REFUSALS)
def test_a_negative_statement_is_a_refusal_whatever_the_words(
    tasks_file: Path, refusal: str
) -> None:
    replies = talk(tasks_file, "insurance", refusal, refusal)
    assert "exception" in replies[1] and STOP not in replies[1]  # insist = 1
    assert replies[2].startswith("I understand.") and STOP in replies[2]


def test_a_stall_is_not_a_refusal(tasks_file: Path) -> None:
    replies = talk(tasks_file, "insurance", *["Let me look into that for you."] * 3)
    assert "exception" not in replies[1] and "add travel insurance" in replies[1]
    assert replies[3].startswith(LEAVE_UNSATISFIED[0])


def test_the_customer_never_reads_the_gold(tmp_path: Path) -> None:
    path = write_tasks(tmp_path / "tasks.json")
    records = json.loads(path.read_text())
    for record in records:  # another gold: the customer must not notice
        record["evaluation_criteria"]["actions"] = []
    blind = tmp_path / "no_gold.json"
    blind.write_text(json.dumps(records))
    texts = (
        "I can move PGAGLM to HAT001 on 2024-05-20 instead. Is that alright with you?",
        f"I can {PROPOSAL}. Is that alright with you?",
        "Reservation PGAGLM has been cancelled.",
    )
    for task in ("cancel", "bags_then_cancel", "insurance"):
        assert talk(path, task, *texts) == talk(blind, task, *texts)


def test_a_probe_gets_the_same_answer_whether_the_policy_grants_or_refuses() -> None:
    db = load_pristine().fork()
    # the policy refuses a change of basic economy and grants one of economy; the customer
    # cannot tell, and answers a flight that does not exist with the same no
    basic = next(r for r in db.base.reservations.values() if r["cabin"] == "basic_economy")
    economy = next(r for r in db.base.reservations.values() if r["cabin"] == "economy")
    answers = set()
    for record in (basic, economy):
        rule = FlightRule(date="2024-05-20", pick="cheapest")
        request = Request(
            "change_flights",
            record["reservation_id"],
            legs=(Leg("outbound", rule),),
            payment=(PaymentPart("credit_card_1"),),
        )
        text = (
            f"I can put reservation {record['reservation_id']} on HAT999 on 2024-05-20. "
            "The difference goes on credit_card_1. Shall I?"
        )
        answers.add(judge(request, text, db, record["user_id"]).answer)
    assert answers == {"no"}


def test_any_option_that_satisfies_its_rule_is_accepted_ties_included() -> None:
    db = load_pristine().fork()
    rule = FlightRule(date="2024-05-20", pick="fastest")
    # every direct flight of a route has one scheduled duration: "fastest direct" ties
    routes = sorted({(f["origin"], f["destination"]) for f in db.base.flights.values()})
    tied, (origin, destination) = next(
        (found, route)
        for route in routes
        if len(found := acceptable(options(db, *route, rule), rule, "economy", 1)) >= 2
    )
    request = Request(
        "book",
        trip=Trip(origin, destination, rule),
        cabin="economy",
        payment=(PaymentPart("credit_card_4421486"),),
    )
    for option in tied:
        text = (
            f"I'll book {option.numbers[0]} on 2024-05-20 in economy, paid with "
            "credit_card_4421486. Shall I?"
        )
        assert judge(request, text, db, "mia_li_3668").answer == "yes", option.numbers


def test_it_reads_the_first_read_limit_characters_of_a_message(tasks_file: Path) -> None:
    late = "x " * (READ_LIMIT // 2) + f"I can {PROPOSAL}. Is that alright with you?"
    reply = talk(tasks_file, "cancel", late)[1]
    assert not reply.startswith("Yes") and "cancel" in reply  # the details came too late


def test_a_reservation_id_of_digits_only_is_read_when_the_db_has_it() -> None:
    """The DB's one digit-only id, 429815: a customer who did not read it as a reservation
    answered a full proposal to cancel it with "What exactly would you do?" (a correct agent
    scored 0, task g99_303 of seed 99). Six digits that are no reservation, or part of a figure,
    are not read as one."""
    db = load_pristine().fork()
    assert db.reservation("429815")
    assert read("I can cancel reservation 429815 for you.", db).reservations == {"429815"}
    for text in ("Your total is $429815.", "It comes to 1,429815 points.", "Code 123456 applies."):
        assert not read(text, db).reservations, text
