"""Shorthands for the hand-written benchmark intents (:mod:`.benchmark_intents`)."""

from __future__ import annotations

from airline_gym.domain.intents import (
    FlightRule,
    Intent,
    Leg,
    Passenger,
    PaymentPart,
    Request,
    Trip,
)

R = Request
F = FlightRule


def pay(*ids: str) -> tuple[PaymentPart, ...]:
    return tuple(PaymentPart(i) for i in ids)


def cancel(rid: str, reason: str = "change_of_plan", insist: int = 0) -> Request:
    return R("cancel", reservation_id=rid, reason=reason, insist=insist)


def intent(
    user: str, name: str, *requests: Request, unknown: tuple[str, ...] = (), **known: str
) -> Intent:
    return Intent(user, name, requests, {"user_id": user, "name": name, **known}, unknown)


def mohamed(*extra: Request) -> Intent:
    """Tasks 14 and 23 start alike: two balances, a refused change, a cancellation in 24 h."""
    business_rt = Trip(
        "JFK", "SFO", F("2024-05-26", direct_only=False), F("2024-05-28", direct_only=False)
    )
    start = (
        R("info", question="gift_card_balance"),
        R("info", question="certificate_balance"),
        R(
            "change_flights",
            reservation_id="K1NW8N",
            cabin="business",
            legs=(Leg("outbound", business_rt.outbound), Leg("return", business_rt.return_rule)),  # type: ignore[arg-type]
        ),
        cancel("K1NW8N"),
    )
    card = PaymentPart("credit_card_2198526")
    tail = (*extra, R("info", question="change_total", payment=(card,)))
    return intent("mohamed_silva_9265", "Mohamed Silva", *start, *tail, reservation_ids="K1NW8N")


def mohamed_book(passengers: tuple[Passenger, ...], *payment: str) -> Request:
    trip = Trip(
        "JFK", "SFO", F("2024-05-26", direct_only=False), F("2024-05-28", direct_only=False)
    )
    return R("book", trip=trip, cabin="business", passengers=passengers, payment=pay(*payment))


MOHAMED = Passenger("Mohamed", "Silva", "1960-11-26")
RAJ = Passenger("Raj", "Sanchez", "1986-09-12")
LIAM = Passenger("Liam", "Wilson", "1980-03-27")
OMAR = Passenger("Omar", "Rossi", "1970-06-06")
HXDUBJ_LEGS = (
    Leg("outbound", F("2024-05-19", depart_after="08:00:00", depart_before="21:00:00")),
    Leg("return", F("2024-05-23", depart_after="08:00:00", depart_before="21:00:00")),
)


def omar() -> Intent:
    return intent(
        "omar_rossi_1241",
        "Omar Rossi",
        R(
            "change_cabin",
            reservation_id="FQ8APE",
            cabin="economy",
            payment=pay("gift_card_8190333"),
        ),
        R("edit_passenger", reservation_id="FQ8APE", passenger_index=0, new_passenger=OMAR),
        R("add_bags", reservation_id="FQ8APE", total_bags=3, payment=pay("gift_card_8190333")),
    )


def aarav_cancels() -> tuple[Request, ...]:
    return (cancel("IFOYYZ"), cancel("NQNU5R"))


def change_m05knl() -> Intent:
    return intent(
        "aarav_garcia_1177",
        "Aarav Garcia",
        R(
            "change_flights",
            reservation_id="M05KNL",
            cabin="economy",
            legs=(Leg("outbound", F("2024-05-24", direct_only=False)),),
            payment=pay("gift_card_8887175"),
        ),
    )


def noah_delay() -> Intent:
    delay = R(
        "compensation",
        reservation_id="4OG6T3",
        flight_number="HAT018",
        flight_date="2024-05-11",
        complaint="delayed",
    )
    return intent("noah_muller_9847", "Noah Muller", delay, unknown=("reservation_ids",))


def omar_davis() -> Intent:
    downgrades = [
        ("JG7FMM", "credit_card_2929732"),
        ("2FBBAH", "gift_card_3481935"),
        ("X7BYG1", "credit_card_2929732"),
        ("EQ1G6C", "gift_card_6847880"),
        ("BOH180", "credit_card_9525117"),
    ]
    requests = [
        R("change_cabin", reservation_id=r, cabin="economy", payment=pay(p)) for r, p in downgrades
    ]
    return intent(
        "omar_davis_3817",
        "Omar Davis",
        *requests,
        R("info", question="change_total"),
        unknown=("payment_methods",),
    )
