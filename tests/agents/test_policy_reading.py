"""The observation-only agent reads the offline customer's words back exactly.

Every request of a few hundred generated intents is said by the customer's own wording
(``say_request``, and its answers to the agent's detail questions) and read back by
:mod:`airline_gym.agents.policy.reading`: what the customer says must come back field for field.
A change of the customer's wording fails here, not silently in the agent.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from airline_gym.agents.policy.reading import (
    read_details,
    read_name,
    read_requests,
    read_rule,
    read_trip,
    said_no,
    said_yes,
)
from airline_gym.agents.policy.speech import PAYMENT_ASKS, Wording, details_question
from airline_gym.domain.intents import FlightRule, Intent, Leg, Passenger, PaymentPart, Request
from airline_gym.users.intent_user import IntentPlayer

sys.path.insert(0, str(Path(__file__).parents[1] / "taskgen"))
from taskgen_files import generated_records

pytestmark = pytest.mark.usefixtures("tau3_for_module")


def _said(request: Request) -> Request:
    """``request`` as far as the customer says it: never its budget caps or how often it pushes
    back; its false claim is said, but the agent decides from the DB and never reads it."""
    legs = tuple(replace(leg, rule=replace(leg.rule, max_price=None)) for leg in request.legs)
    trip = request.trip
    if trip is not None:
        back = trip.return_rule and replace(trip.return_rule, max_price=None)
        trip = replace(trip, outbound=replace(trip.outbound, max_price=None), return_rule=back)
    return replace(
        request, legs=legs, trip=trip, max_total=None, insist=0, claim=None, if_refused=False
    )


def _statement(request: Request) -> Request:
    """What a request statement alone says (the rest comes as answers to questions)."""
    said = _said(request)
    if request.kind == "info":
        payment = tuple(PaymentPart(p.payment_id) for p in said.payment)
        return replace(said, payment=payment)
    keep = {
        "book": ("trip", "cabin"),
        "change_flights": ("reservation_id", "legs"),
        "change_cabin": ("reservation_id", "cabin"),
        "add_bags": ("reservation_id", "total_bags"),
        "edit_passenger": ("reservation_id", "passenger_index", "new_passenger", "replaces"),
        "change_count": ("reservation_id", "passengers"),
        "compensation": ("flight_number", "flight_date", "complaint"),
    }.get(request.kind, ("reservation_id",))
    return Request(request.kind, **{name: getattr(said, name) for name in keep})


def _intents() -> list[Intent]:
    records = generated_records(400, 11) + generated_records(400, 12, "benchmark")
    return [Intent.from_json(r["airline_gym"]["intent"]) for r in records]


GREETING = {"role": "assistant", "content": "Hi! How can I help you today?"}


def _players() -> list[tuple[IntentPlayer, Request]]:
    """A customer for each request of each intent (alone, so it says it first)."""
    return [
        (IntentPlayer(replace(i, requests=(replace(r, if_refused=False),))), r)
        for i in _intents()
        for r in i.requests
    ]


def _ask(player: IntentPlayer, question: str) -> str:
    """The customer's answer to the agent's first question."""
    opening = player.reply([GREETING])
    return player.reply(
        [GREETING, {"role": "user", "content": opening}, {"role": "assistant", "content": question}]
    )


def test_every_generated_request_is_read_back_from_what_the_customer_says() -> None:
    pairs = _players()
    kinds = {request.kind for _, request in pairs}
    assert len(kinds) == 10, kinds  # every kind was said
    described = 0
    for player, request in pairs:
        text = player.reply([GREETING])
        statement = _statement(request)
        if request.reservation_id and not player.knows_id(request.reservation_id):
            # no id: the trip instead (taskgen.asks), which the agent looks for in the profile
            if "trip" in player.intent.known and request.kind != "compensation":
                assert read_trip(text) == player.intent.known["trip"], text
                described += 1
            statement = replace(statement, reservation_id=None)
        assert read_requests(text) == [statement], text
        assert read_name(text) == tuple(player.intent.name.split())
    assert described >= 20


@pytest.mark.parametrize("pay", range(len(PAYMENT_ASKS)))
def test_the_details_a_request_needs_come_back_from_the_customer_s_answers(pay: int) -> None:
    checked = 0
    wording = Wording(pay=pay)
    for player, request in _players():
        question = details_question(request, wording)
        if question is None:
            continue
        answer = _ask(player, question)
        read = read_details(answer, _statement(request))
        assert read == _said(request), (question, answer)
        checked += 1
    assert checked > 300


def test_a_rule_with_a_rank_and_time_bounds_is_read_back() -> None:
    rule = FlightRule(
        "2024-05-20",
        "earliest",
        direct_only=False,
        rank=1,
        depart_after="08:00:00",
        arrive_before="20:30:00",
    )
    request = Request("change_flights", "ABC123", legs=(Leg("outbound", rule),))
    text = IntentPlayer(Intent("u_1", "A B", (request,))).reply([GREETING])
    assert read_requests(text)[0].legs[0].rule == rule
    assert read_rule("flight HAT001 then HAT002 on 2024-05-20") == FlightRule(
        "2024-05-20", "exact", flight_numbers=("HAT001", "HAT002")
    )


def test_yes_and_no_are_told_apart() -> None:
    assert said_yes("Yes, please go ahead.") and not said_no("Yes, please go ahead.")
    assert said_no("No, that's not the flight I want.") and not said_yes("No, thanks.")
    assert not said_yes("What exactly would you do?") and not said_no("What exactly would you do?")


def test_travellers_are_read_in_order() -> None:
    request = read_details(
        "The travellers are Ann Lee (born 1990-01-02), Bo Kim (born 1985-03-04).",
        Request("book"),
    )
    assert request.passengers == (
        Passenger("Ann", "Lee", "1990-01-02"),
        Passenger("Bo", "Kim", "1985-03-04"),
    )
