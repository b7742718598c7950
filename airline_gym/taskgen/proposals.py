"""Proposers: request builders for each bin (:mod:`.bins`), each drawing a request from the DB's
pools.

A proposer returns the requests of one customer (``user_id``, requests) or None when its pool
has nothing for the given user. It only aims: the policy solver decides, and the sampler keeps a
proposal whose decisions have the outcomes its bins aim at.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from airline_gym.domain.intents import (
    QUESTIONS,
    FlightRule,
    Leg,
    Passenger,
    PaymentPart,
    Request,
    Trip,
)
from airline_gym.taskgen.facts import directions as segment_directions
from airline_gym.taskgen.pools import FUTURE_DATES, Pools, ReservationFacts

__all__ = [
    "Build",
    "Proposer",
    "Test",
    "add_bags",
    "add_insurance",
    "book",
    "book_any",
    "cancel",
    "change_cabin",
    "change_count",
    "change_flights",
    "change_flights_any",
    "change_route",
    "compensation",
    "edit_passenger",
    "info",
    "reservation_proposer",
]

Proposer = Callable[
    [random.Random, Pools, "str | None", "frozenset[str]"], "tuple[str, Request] | None"
]
Test = Callable[[ReservationFacts], bool]
Build = Callable[[random.Random, Pools, ReservationFacts], "Request | None"]


def _pick_reservation(
    rng: random.Random,
    pools: Pools,
    name: str,
    test: Callable[[ReservationFacts], bool],
    user: str | None,
    taken: frozenset[str],
) -> ReservationFacts | None:
    if user is None:
        ids = pools.select(name, test)
        if not ids:
            return None
        rid = ids[rng.randrange(len(ids))]
        return None if rid in taken else pools.reservations[rid]
    options = [
        r for r in pools.by_user.get(user, ()) if r not in taken and test(pools.reservations[r])
    ]
    return pools.reservations[rng.choice(options)] if options else None


def _payment_one(rng: random.Random, pools: Pools, user: str) -> tuple[PaymentPart, ...]:
    methods = sorted(
        m["id"]
        for m in pools.user(user)["payment_methods"].values()
        if m["source"] in ("credit_card", "gift_card")
    )
    return (PaymentPart(rng.choice(methods)),) if methods else ()


def reservation_proposer(test: Test, build: Build, name: str) -> Proposer:
    def propose(
        rng: random.Random, pools: Pools, user: str | None, taken: frozenset[str]
    ) -> tuple[str, Request] | None:
        facts = _pick_reservation(rng, pools, name, test, user, taken)
        if facts is None:
            return None
        request = build(rng, pools, facts)
        return None if request is None else (facts.user_id, request)

    return propose


def cancel(reasons: Sequence[str]) -> Callable[[random.Random, Pools, ReservationFacts], Request]:
    def build(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
        return Request(
            "cancel",
            reservation_id=facts.reservation_id,
            reason=rng.choice(reasons),
            insist=rng.randrange(2),
        )

    return build


def _rule(rng: random.Random, date: str) -> FlightRule:
    """A stated rule: the cheapest, earliest, latest or fastest on a date; mostly direct."""
    pick = rng.choice(("cheapest", "cheapest", "earliest", "latest", "fastest"))
    return FlightRule(date=date, pick=pick, direct_only=rng.random() < 0.8)  # type: ignore[arg-type]


def change_flights(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """Move one or both directions to the flight a rule picks, on a date with enough direct
    flights of the direction's route that the pick is not a guess (``pools.wide``)."""
    return _change_flights(rng, pools, facts, wide=True)


def change_flights_any(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """:func:`change_flights` on any date within three days (for refusals and declines)."""
    return _change_flights(rng, pools, facts, wide=False)


def _change_flights(
    rng: random.Random, pools: Pools, facts: ReservationFacts, wide: bool
) -> Request | None:
    res = pools.db.reservations[facts.reservation_id]
    payment = _payment_one(rng, pools, facts.user_id)
    if not payment:
        return None
    directions: list[str] = ["outbound"]
    if facts.round_trip:
        directions = rng.choice((["outbound"], ["return"], ["outbound", "return"]))
    dates = sorted({seg["date"] for seg in res["flights"]})
    parts = segment_directions(res)
    legs = []
    for direction in directions:
        base = dates[0] if direction == "outbound" else dates[-1]
        pool: tuple[str, ...] = FUTURE_DATES
        if wide and parts[direction]:
            route = (
                res["flights"][parts[direction][0]]["origin"],
                res["flights"][parts[direction][-1]]["destination"],
            )
            pool = pools.wide.get(route, ())
        later = [d for d in pool if d != base and abs(int(d[-2:]) - int(base[-2:])) <= 3]
        if not later:
            return None
        legs.append(Leg(direction, _rule(rng, rng.choice(later))))  # type: ignore[arg-type]
    legs.sort(key=lambda leg: leg.direction != "outbound")
    return Request(
        "change_flights",
        reservation_id=facts.reservation_id,
        legs=tuple(legs),
        payment=payment,
        insist=rng.randrange(2),
    )


def change_route(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """A flight change that would end one direction somewhere else (the policy refuses)."""
    request = change_flights_any(rng, pools, facts)
    if request is None:
        return None
    leg = request.legs[0]
    res = pools.db.reservations[facts.reservation_id]
    ends = res["destination"] if leg.direction == "outbound" else res["origin"]
    elsewhere = sorted({d for (o, d) in pools.routes if d != ends and d != res["origin"]})
    moved = Leg(leg.direction, leg.rule, rng.choice(elsewhere))
    return Request(**{**request.__dict__, "legs": (moved, *request.legs[1:])})


def change_cabin(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    payment = _payment_one(rng, pools, facts.user_id)
    cabins = [c for c in ("basic_economy", "economy", "business") if c != facts.cabin]
    if not payment:
        return None
    return Request(
        "change_cabin",
        reservation_id=facts.reservation_id,
        cabin=rng.choice(cabins),
        payment=payment,
        insist=rng.randrange(2),
    )


def add_bags(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    payment = _payment_one(rng, pools, facts.user_id)
    if not payment:
        return None
    return Request(
        "add_bags",
        reservation_id=facts.reservation_id,
        total_bags=facts.bags + rng.randint(1, 3),
        payment=payment,
    )


def _someone(rng: random.Random, pools: Pools) -> Passenger:
    first, last = pools.names[rng.randrange(len(pools.names))]
    dob = f"{rng.randint(1950, 2005)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return Passenger(first, last, dob)


def edit_passenger(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
    index = rng.randrange(facts.passengers)
    old = pools.db.reservations[facts.reservation_id]["passengers"][index]
    new = _someone(rng, pools)
    if rng.random() < 0.5:  # a corrected date of birth, or a corrected name
        new = Passenger(old["first_name"], old["last_name"], new.dob)
    return Request(
        "edit_passenger",
        reservation_id=facts.reservation_id,
        passenger_index=index,
        new_passenger=new,
    )


def change_count(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
    current = [
        Passenger(p["first_name"], p["last_name"], p["dob"])
        for p in pools.db.reservations[facts.reservation_id]["passengers"]
    ]
    wanted = (
        current[:-1]
        if len(current) > 1 and rng.random() < 0.5
        else [*current, _someone(rng, pools)]
    )
    return Request(
        "change_count",
        reservation_id=facts.reservation_id,
        passengers=tuple(wanted),
        insist=rng.randrange(2),
    )


def add_insurance(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
    return Request("add_insurance", reservation_id=facts.reservation_id, insist=rng.randrange(2))


def compensation(
    complaint: str | None,
) -> Callable[[random.Random, Pools, ReservationFacts], Request]:
    """Compensation for a cancelled or delayed flight of the reservation (None: whichever it
    has, cancelled first)."""

    def build(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
        said = complaint or ("cancelled" if facts.cancelled else "delayed")
        number, date = rng.choice(facts.cancelled if said == "cancelled" else facts.delayed)
        return Request(
            "compensation",
            reservation_id=facts.reservation_id,
            flight_number=number,
            flight_date=date,
            complaint=said,
            insist=rng.randrange(2),
        )

    return build


def info(
    rng: random.Random, pools: Pools, user: str | None, taken: frozenset[str]
) -> tuple[str, Request] | None:
    user = user or rng.choice(pools.users)
    question = rng.choice(sorted(set(QUESTIONS) - {"change_total"}))  # needs earlier changes
    methods = pools.user(user)["payment_methods"].values()
    if question in ("reservation_cost", "bag_allowance"):
        options = [r for r in pools.by_user.get(user, ()) if r not in taken]
        if not options:
            return None
        return user, Request("info", question=question, reservation_id=rng.choice(options))
    if question == "gift_card_balance" and not any(m["source"] == "gift_card" for m in methods):
        return None
    if question == "certificate_balance" and not any(m["source"] == "certificate" for m in methods):
        return None
    if question == "total_upcoming_cost" and not pools.by_user.get(user):
        return None
    return user, Request("info", question=question)


def _split_payment(rng: random.Random, methods: list[Any]) -> tuple[PaymentPart, ...]:
    """One card; or a certificate and/or up to two gift cards first (each covering what its
    balance can, in order), then a credit card for the rest: within the policy's limits (one
    certificate, one credit card, three gift cards)."""
    by_source: dict[str, list[str]] = {}
    for m in methods:
        by_source.setdefault(m["source"], []).append(m["id"])
    credit, gifts = by_source.get("credit_card", []), by_source.get("gift_card", [])
    if not credit:
        return (PaymentPart(rng.choice(gifts)),) if gifts else ()
    parts: list[PaymentPart] = []
    if by_source.get("certificate") and rng.random() < 0.35:
        parts.append(PaymentPart(rng.choice(by_source["certificate"])))
    if gifts and rng.random() < 0.35:
        parts += [PaymentPart(g) for g in rng.sample(gifts, min(len(gifts), rng.randint(1, 2)))]
    if not parts and gifts and rng.random() < 0.3:
        return (PaymentPart(rng.choice(gifts)),)
    return (*parts, PaymentPart(rng.choice(credit)))


def book(
    rng: random.Random, pools: Pools, user: str | None, taken: frozenset[str]
) -> tuple[str, Request] | None:
    """A booking by a stated rule, on dates with enough direct flights that the rule's pick is
    not a guess (``pools.wide``)."""
    return _book(rng, pools, user, pools.wide)


def book_any(
    rng: random.Random, pools: Pools, user: str | None, taken: frozenset[str]
) -> tuple[str, Request] | None:
    """:func:`book` on any date with an available flight (for declines)."""
    return _book(rng, pools, user, pools.routes)


def _book(
    rng: random.Random,
    pools: Pools,
    user: str | None,
    routes_dates: dict[tuple[str, str], tuple[str, ...]],
) -> tuple[str, Request] | None:
    user = user or rng.choice(pools.users)
    record = pools.user(user)
    routes = list(routes_dates)
    if not routes:
        return None
    origin, destination = routes[rng.randrange(len(routes))]
    dates = routes_dates[origin, destination]
    out_date = rng.choice(dates)
    back = [d for d in routes_dates.get((destination, origin), ()) if d > out_date]
    return_rule = _rule(rng, rng.choice(back)) if back and rng.random() < 0.5 else None
    count = rng.choices((1, 2, 3, 4, 5), weights=(40, 30, 15, 10, 5))[0]
    name = record["name"]
    people = [Passenger(name["first_name"], name["last_name"], record["dob"])]
    people += [
        Passenger(p["first_name"], p["last_name"], p["dob"]) for p in record["saved_passengers"]
    ]
    while len(people) < count:
        people.append(_someone(rng, pools))
    cabin = rng.choice(("basic_economy", "economy", "business"))
    methods = sorted(record["payment_methods"].values(), key=lambda m: m["id"])
    payment = _split_payment(rng, methods)
    if not payment:
        return None
    return user, Request(
        "book",
        trip=Trip(origin, destination, _rule(rng, out_date), return_rule),
        cabin=cabin,
        passengers=tuple(people[:count]),
        total_bags=rng.randint(0, count * 2),
        insurance=rng.random() < 0.4,
        payment=payment,
    )
