"""A proposal names a write by its details, whatever its words: the details each write needs."""

from __future__ import annotations

from airline_gym.domain.database import load_pristine
from airline_gym.domain.proposals import unnamed

# PGAGLM: business, one passenger (isabella_muller_2311), flights HAT...; see the DB
RID = "PGAGLM"


def test_a_cancellation_names_the_reservation_and_the_cancellation() -> None:
    args = {"reservation_id": RID}
    assert unnamed(f"May I cancel {RID} for you?", "cancel_reservation", args, None) == []
    assert unnamed("Shall I proceed?", "cancel_reservation", args, None) == [
        f"reservation {RID}",
        "the cancellation",
    ]
    assert unnamed(f"Shall I change {RID}?", "cancel_reservation", args, None) == [
        "the cancellation"
    ]


def test_a_flight_change_names_the_new_flights_the_new_cabin_and_the_card() -> None:
    db = load_pristine().fork()
    record = db.reservation(RID)
    assert record is not None
    kept = [{"flight_number": s["flight_number"], "date": s["date"]} for s in record["flights"]]
    args = {"reservation_id": RID, "cabin": "economy", "flights": kept, "payment_id": "gift_card_1"}
    text = f"I'll move {RID} to economy; the refund goes to gift_card_1. Is that alright?"
    assert unnamed(text, "update_reservation_flights", args, db) == []  # same flights
    missing = unnamed(f"I'll move {RID}. Is that alright?", "update_reservation_flights", args, db)
    assert missing == ["the cabin (economy)", "the payment method (gift_card_1)"]
    moved = dict(args, cabin=record["cabin"], flights=[{"flight_number": "HAT999", "date": "x"}])
    assert "flight HAT999" in unnamed(text, "update_reservation_flights", moved, db)


def test_bags_name_the_total_or_the_added_and_the_card_when_one_is_paid() -> None:
    db = load_pristine().fork()
    record = db.reservation(RID)
    assert record is not None
    total = record["total_baggages"] + 2
    args = {
        "reservation_id": RID,
        "total_baggages": total,
        "nonfree_baggages": record["nonfree_baggages"],
        "payment_id": "gift_card_1",
    }
    name = "update_reservation_baggages"
    assert unnamed(f"Add 2 more bags to {RID}?", name, args, db) == []
    assert unnamed(f"Set {RID} to {total} checked bags?", name, args, db) == []
    paid = dict(args, nonfree_baggages=record["nonfree_baggages"] + 1)
    assert unnamed(f"Add 2 more bags to {RID}?", name, paid, db) == [
        "the payment method (gift_card_1)"
    ]
    assert unnamed(f"Add bags to {RID}?", name, args, db) == [f"the bags ({total} in all)"]


def test_a_passenger_change_names_what_changes_and_a_certificate_its_amount() -> None:
    db = load_pristine().fork()
    record = db.reservation(RID)
    assert record is not None
    people = [dict(p) for p in record["passengers"]]
    people[0]["dob"] = "1999-09-09"
    args = {"reservation_id": RID, "passengers": people}
    name = "update_reservation_passengers"
    assert unnamed(f"Change the date of birth on {RID} to 1999-09-09?", name, args, db) == []
    assert unnamed(f"Update the passenger on {RID}?", name, args, db) == ["dob 1999-09-09"]
    cert = {"user_id": "u", "amount": 100}
    assert unnamed("A $100 travel certificate?", "send_certificate", cert, db) == []
    assert unnamed("Some compensation?", "send_certificate", cert, db) == ["a certificate of 100"]


def test_a_booking_names_every_flight_the_cabin_and_every_payment_method() -> None:
    args = {
        "flights": [
            {"flight_number": "HAT001", "date": "d"},
            {"flight_number": "HAT002", "date": "d"},
        ],
        "cabin": "basic_economy",
        "payment_methods": [{"payment_id": "gift_card_1"}, {"payment_id": "credit_card_2"}],
    }
    text = "HAT001 and HAT002 in basic economy, paid with gift_card_1 and credit_card_2?"
    assert unnamed(text, "book_reservation", args, None) == []
    assert unnamed("HAT001 in economy, gift_card_1?", "book_reservation", args, None) == [
        "flight HAT002",
        "the cabin (basic economy)",
        "the payment method (credit_card_2)",
    ]
