"""Well-posed generated tasks (issue 33, part 3): no gold rests on a tie, no new flight leaves
before the one before it arrives, no request comes after the hand-off, the customer says every
payment plan whole and every new destination. Counted by ``testing.taskgen_wellposed`` (10,000
tasks in the docs; a sample here), and each count is shown to catch its defect."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from airline_gym.domain.database import load_pristine
from airline_gym.domain.intents import FlightRule, Intent, Leg, PaymentPart, Request, Trip
from airline_gym.taskgen.generate import generate
from airline_gym.taskgen.solver import solve
from airline_gym.testing import taskgen_wellposed
from airline_gym.testing.taskgen_wellposed import COUNTS, count, ill_posed

pytestmark = pytest.mark.usefixtures("tau3_for_module")  # generating reads tau3's task file


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return generate(1500, 33).records


def test_no_generated_task_is_ill_posed(records: list[dict[str, Any]]) -> None:
    found = count(records)
    assert found["tasks"] == 1500
    assert found["counts"] == dict.fromkeys(COUNTS, 0), found["examples"]


def test_a_hand_off_is_always_the_last_request(records: list[dict[str, Any]]) -> None:
    with_transfer = [r for r in records if "transfer" in r["airline_gym"]["outcomes"]]
    assert with_transfer and all(
        r["airline_gym"]["outcomes"][-1] == "transfer" for r in with_transfer
    )
    assert any(len(r["airline_gym"]["outcomes"]) > 1 for r in with_transfer)  # question first


def _record(intent: Intent, outcomes: list[str], actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "x",
        "evaluation_criteria": {"actions": actions},
        "airline_gym": {"intent": intent.to_json(), "outcomes": outcomes},
    }


def test_the_counts_catch_what_they_count() -> None:
    base = load_pristine()
    rid = "PGAGLM"  # isabella_muller_2311, business, LAX-ORD-ATL on 2024-05-24
    cancel = Request("cancel", rid, reason="change_of_plan")
    info = Request("info", question="gift_card_balance")
    after_hand_off = Intent("isabella_muller_2311", "I M", (cancel, info))
    assert "order" in ill_posed(_record(after_hand_off, ["transfer", "granted"], []), base)
    # HAT223 (ORD-ATL) leaves at 09:00, before HAT090 (LAX-ORD) lands at 16:00 the same day
    flights = [
        {"flight_number": "HAT090", "date": "2024-05-24"},
        {"flight_number": "HAT223", "date": "2024-05-23"},
    ]
    write = {
        "name": "update_reservation_flights",
        "arguments": {
            "reservation_id": rid,
            "cabin": "business",
            "flights": flights,
            "payment_id": "gift_card_4033665",
        },
    }
    rule = FlightRule("2024-05-23")
    moved = Request("change_flights", rid, legs=(Leg("return", rule),))
    intent = Intent("isabella_muller_2311", "I M", (moved,))
    assert "itinerary" in ill_posed(_record(intent, ["granted"], [write]), base)


def test_the_payment_and_route_counts_read_the_customers_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = load_pristine()
    plan = (PaymentPart("certificate_1"), PaymentPart("credit_card_2"))
    trip = Trip("JFK", "SEA", FlightRule("2024-05-20"))
    booking = Request("book", trip=trip, cabin="economy", payment=plan)
    route = Request(
        "change_flights",
        "PGAGLM",
        legs=(Leg("outbound", FlightRule("2024-05-20"), destination="DTW"),),
    )
    intent = Intent("isabella_muller_2311", "I M", (booking, route))
    record = _record(intent, ["declined", "refused"], [])
    assert ill_posed(record, base) == []
    # the old customer's words: "I'd like to put  and the rest on ...", no new destination
    monkeypatch.setattr(taskgen_wellposed, "_payment_words", lambda r: ["I'd like to put  ."])
    monkeypatch.setattr(
        "airline_gym.users.intent_words.say_request", lambda r, which="": "Change my flight."
    )
    assert ill_posed(record, base) == ["payment", "route"]


def test_a_tied_pick_is_noted_and_never_generated() -> None:
    base = load_pristine()
    db = base.fork()
    from airline_gym.domain.flight_options import acceptable, options

    rule = FlightRule("2024-05-20", pick="fastest")
    routes = sorted({(f["origin"], f["destination"]) for f in db.base.flights.values()})
    origin, destination = next(
        r for r in routes if len(acceptable(options(db, *r, rule), rule, "economy", 1)) >= 2
    )
    trip = Trip(origin, destination, rule)
    booking = Request(
        "book",
        trip=trip,
        cabin="economy",
        passengers=(),
        payment=(PaymentPart("credit_card_4421486"),),
    )
    from airline_gym.domain.intents import Passenger

    booking = replace(booking, passengers=(Passenger("Mia", "Li", "1990-04-05"),))
    solution = solve(base, Intent("mia_li_3668", "Mia Li", (booking,)))
    assert solution.ill_posed and "ties" in solution.ill_posed[0]


def test_bags_already_on_a_reservation_are_not_charged_again_after_a_downgrade() -> None:
    # VQWQGF: regular member, business, one passenger, 2 free bags (business allows 2)
    downgrade = Request(
        "change_cabin", "VQWQGF", cabin="economy", payment=(PaymentPart("credit_card_3086580"),)
    )
    bags = Request(
        "add_bags", "VQWQGF", total_bags=3, payment=(PaymentPart("credit_card_3086580"),)
    )
    solution = solve(load_pristine(), Intent("juan_li_9671", "Juan Li", (downgrade, bags)))
    added = solution.decisions[1]
    # economy allows 1: the third bag is paid, the two already there stay free
    assert added.writes[0].arguments["nonfree_baggages"] == 1 and added.amount == 50
