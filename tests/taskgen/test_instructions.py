"""The customer's instructions written from an intent: the benchmark's shape, every DB-changing
choice pinned, unknown info kept out of what the customer knows, and loadable by the reference."""

from __future__ import annotations

import pytest

from airline_gym.domain.decisions import Decision, Solution
from airline_gym.domain.intents import (
    FlightRule,
    Intent,
    Leg,
    Passenger,
    PaymentPart,
    Persona,
    Request,
    Trip,
)
from airline_gym.taskgen.instructions import write_instructions

BOOK = Request(
    "book",
    trip=Trip(
        "JFK",
        "SFO",
        FlightRule("2024-05-20", "earliest", direct_only=False),
        FlightRule("2024-05-24", "cheapest", max_price=400),
    ),
    cabin="business",
    passengers=(Passenger("Ada", "Lee", "1990-02-03"), Passenger("Bo", "Lee", "1992-04-05")),
    total_bags=3,
    insurance=True,
    payment=(PaymentPart("gift_card_111", 120), PaymentPart("credit_card_222")),
)
CHANGE = Request(
    "change_flights",
    reservation_id="ABC123",
    legs=(Leg("return", FlightRule("2024-05-22", "latest")),),
    payment=(PaymentPart("credit_card_222"),),
    insist=1,
)
CANCEL = Request("cancel", reservation_id="XYZ789", reason="health")
INTENT = Intent(
    "ada_lee_1234",
    "Ada Lee",
    (BOOK, CHANGE, CANCEL),
    known={"reservation_ids": "ABC123, XYZ789", "email": "ada@example.com"},
    unknown=("dob",),
    persona=Persona(terse=True),
)


def test_shape_and_second_person() -> None:
    text = write_instructions(INTENT, Solution(()))
    assert set(text) == {
        "domain",
        "reason_for_call",
        "known_info",
        "unknown_info",
        "task_instructions",
    }
    assert text["domain"] == "airline"
    for key in ("reason_for_call", "known_info", "task_instructions"):
        value = text[key]
        assert value and value.startswith(("You", "Ask", "1.")), (key, value)
        assert " I " not in f" {value} " and " my " not in f" {value} "
    assert text["unknown_info"] == "You do not remember your date of birth."


def test_every_db_changing_choice_is_pinned() -> None:
    said = write_instructions(INTENT, Solution(()))["task_instructions"] or ""
    for needle in (
        "earliest business flight, direct or with one stop, on 2024-05-20",
        "cheapest business direct flight on 2024-05-24",
        "Ada Lee (born 1990-02-03)",
        "Bo Lee (born 1992-04-05)",
        "3 checked bags in total",
        "you want travel insurance",
        "$120 on gift_card_111",
        "the rest on credit_card_222",
        "at most $400 per traveller",
        "return part of reservation ABC123",
        "latest",
        "2024-05-22",
        "Keep the cabin",
        "use only credit_card_222",
        "Cancel reservation XYZ789",
        "unwell",
        "push back once",
    ):
        assert needle in said, needle
    # the requests come in order, numbered
    assert said.index("1. ") < said.index("2. ") < said.index("3. ")
    assert said.index("2024-05-20") < said.index("ABC123") < said.index("XYZ789")
    assert "as few words" in said


def test_insisting_only_where_the_intent_insists() -> None:
    one = write_instructions(Intent("u_v_1", "U V", (CANCEL,)), Solution(()))
    assert "push back" not in (one["task_instructions"] or "")
    assert "accept it" in (one["task_instructions"] or "")
    two = write_instructions(Intent("u_v_1", "U V", (CHANGE,)), Solution(()))
    assert "push back once" in (two["task_instructions"] or "")


def test_unknown_reservation_is_never_named() -> None:
    intent = Intent(
        "u_v_1", "U V", (CANCEL,), known={"reservation_ids": "XYZ789"}, unknown=("reservation_ids",)
    )
    text = write_instructions(intent, Solution(()))
    assert all("XYZ789" not in (v or "") for v in text.values())
    assert text["unknown_info"] == "You do not remember your reservation id."


def test_a_declined_request_says_the_customer_walks_away() -> None:
    cap = Request(
        "change_cabin",
        reservation_id="ABC123",
        cabin="business",
        payment=(PaymentPart("credit_card_222"),),
    )
    intent = Intent("u_v_1", "U V", (cap,), known={"reservation_ids": "ABC123"})
    declined = Solution((Decision(0, "declined", "over budget"),))
    assert "do not go ahead" in (write_instructions(intent, declined)["task_instructions"] or "")
    assert "do not go ahead" not in (
        write_instructions(intent, Solution(()))["task_instructions"] or ""
    )


def test_the_reference_task_model_loads_them() -> None:
    tau2_tasks = pytest.importorskip("tau2.data_model.tasks")
    task = {
        "id": "gen_0",
        "user_scenario": {"instructions": write_instructions(INTENT, Solution(()))},
        "evaluation_criteria": {"actions": [], "reward_basis": ["DB"]},
    }
    loaded = tau2_tasks.Task.model_validate(task)
    assert loaded.user_scenario.instructions.unknown_info == (
        "You do not remember your date of birth."
    )


def test_rule_bounds_rank_caps_and_ordered_payment_are_pinned() -> None:
    rule = FlightRule(
        "2024-05-21",
        "fastest",
        direct_only=False,
        rank=1,
        depart_after="08:00:00",
        arrive_before="21:30:00",
    )
    change = Request(
        "change_flights",
        reservation_id="ABC123",
        legs=(Leg("outbound", rule, destination="LAX"),),
        payment=(PaymentPart("gift_card_1"), PaymentPart("credit_card_2")),
        max_total=250,
    )
    intent = Intent("u_v_1", "U V", (change,), known={"reservation_ids": "ABC123"})
    said = write_instructions(intent, Solution(()))["task_instructions"] or ""
    for needle in (
        "second fastest",
        "leaving after 08:00",
        "arriving before 21:30",
        "end in LAX instead",
        "at most $250 in all",
        "gift_card_1, then credit_card_2, in that order",
    ):
        assert needle in said, needle


def test_information_questions_are_asked_in_the_customers_words() -> None:
    ask = Request("info", reservation_id="ABC123", question="bag_allowance")
    intent = Intent("u_v_1", "U V", (ask,), known={"reservation_ids": "ABC123"})
    reason = write_instructions(intent, Solution(()))["reason_for_call"]
    assert reason == (
        "You want to know how many checked bags your reservation ABC123 includes for free, "
        "all passengers together."
    )
