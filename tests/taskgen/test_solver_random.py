"""The solver on random intents (every kind, 1-3 requests, random rules and payments): it never
raises, so no write it decides is refused by the tools, and every outcome comes up."""

from __future__ import annotations

import random
from collections import Counter

from airline_gym.domain.database import load_pristine
from airline_gym.domain.intents import (
    CABINS,
    COMPLAINTS,
    QUESTIONS,
    REASONS,
    FlightRule,
    Intent,
    Leg,
    Passenger,
    PaymentPart,
    Request,
    Trip,
)
from airline_gym.taskgen.solver import solve

DATES = [f"2024-05-{d:02d}" for d in range(14, 31)]


def _rule(rng: random.Random) -> FlightRule:
    return FlightRule(
        rng.choice(DATES),
        pick=rng.choice(["cheapest", "earliest", "latest", "fastest"]),
        direct_only=rng.random() < 0.5,
        rank=rng.choice([0, 0, 1]),
        depart_after=rng.choice([None, "08:00:00"]),
        arrive_before=rng.choice([None, "23:00:00"]),
    )


def _request(rng: random.Random, db, user: dict, airports: list[str]) -> Request:
    methods = list(user["payment_methods"])
    rng.shuffle(methods)
    pay = tuple(PaymentPart(m) for m in methods[: rng.randint(1, 3)])
    rid = rng.choice(user["reservations"]) if user["reservations"] else None
    kind = rng.choice(["book", "info"] + (["reservation"] * 6 if rid else []))
    if kind == "book":
        origin, destination = rng.sample(airports, 2)
        back = _rule(rng) if rng.random() < 0.5 else None
        return Request(
            "book",
            trip=Trip(origin, destination, _rule(rng), back),
            cabin=rng.choice(CABINS),
            passengers=(Passenger("Ada", "Byron", "1990-01-01"),) * rng.randint(1, 6),
            total_bags=rng.randint(0, 5),
            insurance=rng.random() < 0.5,
            payment=pay,
        )
    if kind == "info":
        about_one = {"reservation_cost", "bag_allowance"}
        questions = sorted(QUESTIONS) if rid else sorted(set(QUESTIONS) - about_one)
        return Request("info", question=rng.choice(questions), reservation_id=rid)
    segment = rng.choice(db.reservation(rid)["flights"])
    return rng.choice(
        [
            Request("cancel", reservation_id=rid, reason=rng.choice(REASONS)),
            Request(
                "change_flights",
                reservation_id=rid,
                legs=tuple(
                    Leg(d, _rule(rng))
                    for d in rng.sample(["outbound", "return"], rng.randint(1, 2))
                ),
                cabin=rng.choice([None, *CABINS]),
                payment=pay[:1],
            ),
            Request("change_cabin", reservation_id=rid, cabin=rng.choice(CABINS), payment=pay[:1]),
            Request("add_bags", reservation_id=rid, total_bags=rng.randint(0, 8), payment=pay[:1]),
            Request(
                "edit_passenger",
                reservation_id=rid,
                passenger_index=rng.randint(0, 3),
                new_passenger=Passenger("Cy", "Dee", "2000-01-01"),
            ),
            Request(
                "compensation",
                reservation_id=rid,
                flight_number=segment["flight_number"],
                flight_date=segment["date"],
                complaint=rng.choice(COMPLAINTS),
            ),
        ]
    )


def test_random_intents_are_decided_without_a_refused_write():
    base = load_pristine()
    db = base.fork()
    rng = random.Random(20240515)
    users = sorted(base.users)
    airports = sorted({f["origin"] for f in base.flights.values()})
    outcomes: Counter[tuple[str, str]] = Counter()
    for _ in range(1500):
        user = base.users[rng.choice(users)]
        requests = tuple(_request(rng, db, user, airports) for _ in range(rng.randint(1, 3)))
        solution = solve(base, Intent(user["user_id"], "x", requests))  # raises on a refused write
        outcomes.update(
            (r.kind, d.outcome) for r, d in zip(requests, solution.decisions, strict=True)
        )
    kinds_granted = {kind for kind, outcome in outcomes if outcome == "granted"}
    assert kinds_granted >= {
        "book",
        "cancel",
        "change_flights",
        "change_cabin",
        "add_bags",
        "edit_passenger",
        "info",
    }
    assert {o for _, o in outcomes} == {"granted", "refused", "transfer", "declined"}
