"""What the policy solver reads off the DB: allowances, flown segments, directions, flight options.

Every function here is a fact any agent could establish with the read tools; the rules
(``rules_*``) decide with them. Policy clauses are cited in our words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.decisions import Call
from airline_gym.domain.fares import BAG_FEE, INSURANCE_FEE, MAX_PASSENGERS, free_bags
from airline_gym.domain.flight_options import Option, options, pick
from airline_gym.domain.intents import FlightRule
from airline_gym.domain.records import Record
from airline_gym.domain.tools import NOW

__all__ = [
    "BAG_FEE",
    "COVERED_REASONS",
    "FLOWN",
    "INSURANCE_FEE",
    "MAX_PASSENGERS",
    "WITHIN_24H",
    "Option",
    "call",
    "cancelled_segments",
    "directions",
    "flown_segments",
    "free_bags",
    "is_upcoming",
    "number",
    "options",
    "paid",
    "pick",
    "plan_payment",
    "reservation_read",
    "searches",
    "status_of",
    "under_way",
    "user_read",
]

#: Policy: a booking made within the last 24 hours can be cancelled ("now" is NOW).
WITHIN_24H = "2024-05-14T15:00:00"
#: Statuses of a flight-date that has taken off (policy: flown, or flying).
FLOWN = frozenset({"landed", "flying"})
#: Insurance covers cancellations for health or weather reasons (policy: "Travel insurance").
COVERED_REASONS = frozenset({"health", "weather"})
TODAY = NOW[:10]


def call(name: str, **arguments: Any) -> Call:
    """One tool call."""
    return Call(name, arguments)


def user_read(user_id: str) -> Call:
    """``get_user_details`` of one user."""
    return call("get_user_details", user_id=user_id)


def reservation_read(reservation_id: str) -> Call:
    """``get_reservation_details`` of one reservation."""
    return call("get_reservation_details", reservation_id=reservation_id)


def status_of(db: AirlineDB, flight_number: str, date: str) -> str | None:
    """The status of one flight-date, or None when the DB has no such flight-date."""
    flight = db.flight(flight_number)
    if flight is None or date not in flight["dates"]:
        return None
    return str(flight["dates"][date]["status"])


def under_way(statuses: Sequence[str | None]) -> bool:
    """A trip under way, by its segments' statuses: one has taken off and another is still to
    take (neither taken off nor cancelled)."""
    return any(s in FLOWN for s in statuses) and any(
        s not in FLOWN and s != "cancelled" for s in statuses
    )


def flown_segments(db: AirlineDB, reservation: Record) -> list[Record]:
    """Segments that have taken off (landed or flying)."""
    return [
        s for s in reservation["flights"] if status_of(db, s["flight_number"], s["date"]) in FLOWN
    ]


def cancelled_segments(db: AirlineDB, reservation: Record) -> list[Record]:
    """Segments the airline cancelled."""
    return [
        s
        for s in reservation["flights"]
        if status_of(db, s["flight_number"], s["date"]) == "cancelled"
    ]


def is_upcoming(db: AirlineDB, reservation: Record) -> bool:
    """Not cancelled, and some segment has not taken off yet."""
    if reservation["status"] == "cancelled":
        return False
    return any(
        status_of(db, s["flight_number"], s["date"]) not in FLOWN | {"cancelled"}
        and s["date"] >= TODAY
        for s in reservation["flights"]
    )


def directions(reservation: Record) -> dict[str, list[int]]:
    """Indexes of the outbound and return segments: the outbound ends at the destination."""
    out: dict[str, list[int]] = {"outbound": [], "return": []}
    direction = "outbound"
    for i, segment in enumerate(reservation["flights"]):
        out[direction].append(i)
        if direction == "outbound" and segment["destination"] == reservation["destination"]:
            direction = "return"
    if reservation["flight_type"] == "one_way":
        out["outbound"] += out["return"]
        out["return"] = []
    return out


def paid(reservation: Record) -> int | float:
    """What the reservation's payment history adds up to."""
    total = sum(p["amount"] for p in reservation["payment_history"])
    return int(total) if float(total).is_integer() else total


def number(value: int | float) -> str:
    """A dollar figure as the agent says it (``23553``, ``12.5``)."""
    return str(int(value)) if float(value).is_integer() else str(round(value, 2))


def searches(origin: str, destination: str, rule: FlightRule) -> tuple[Call, ...]:
    """The searches an agent must run to apply ``rule`` (one-stops only when they compete)."""
    args = {"origin": origin, "destination": destination, "date": rule.date}
    direct = Call("search_direct_flight", args)
    onestop = Call("search_onestop_flight", dict(args))
    if rule.pick == "exact":  # a named connection can be priced by any search: none is a must
        return (direct,) if len(rule.flight_numbers) == 1 else ()
    return (direct,) if rule.direct_only else (direct, onestop)


def payment_sources(user: Record) -> Mapping[str, Record]:
    """The user's saved payment methods by id."""
    methods: Mapping[str, Record] = user["payment_methods"]
    return methods


def plan_payment(
    user: Record, parts: Sequence[tuple[str, int | None]], total: int
) -> list[dict[str, Any]] | str:
    """Split ``total`` over the customer's payment parts, or say why it cannot be done.

    Fixed amounts first; parts without an amount in order, a gift card or certificate up to its
    balance, a credit card with the rest. Zero parts are dropped. Policy: "at most one travel
    certificate, at most one credit card, and at most three gift cards", all from the profile.
    """
    methods = payment_sources(user)
    for pid, _ in parts:
        if pid not in methods:
            return f"payment method {pid} is not in the profile"
    kinds = [methods[pid]["source"] for pid, _ in parts]
    if (
        kinds.count("certificate") > 1
        or kinds.count("credit_card") > 1
        or kinds.count("gift_card") > 3
    ):
        return "at most one certificate, one credit card and three gift cards per booking"
    amounts = {pid: amount for pid, amount in parts if amount is not None}
    left = total - sum(amounts.values())
    for pid, amount in parts:
        if amount is not None:
            continue
        method = methods[pid]
        share = left if method["source"] == "credit_card" else min(left, int(method["amount"]))
        amounts[pid] = max(0, share)
        left -= amounts[pid]
    if left != 0:
        return f"the payment parts do not add up to the total of {total}"
    for pid, amount in amounts.items():
        if methods[pid]["source"] != "credit_card" and methods[pid]["amount"] < amount:
            return f"not enough balance on {pid}"
    return [{"payment_id": pid, "amount": amounts[pid]} for pid, _ in parts if amounts[pid]]
