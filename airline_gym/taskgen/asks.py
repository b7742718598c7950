"""What a generated customer does not know (its reservation id), what it will pay (a cap), and
what it asks when its first choice is not done (a fallback).

A share of the customers that call about a reservation do not remember its id
(:data:`UNKNOWN_SHARE`): they name the trip instead (its route and first flight's date,
:func:`trip_words`), and the agent finds the reservation by reading the profile and the
reservations listed there (the solver's lookups then start with the profile:
:meth:`~airline_gym.taskgen.context.Context.reservation_reads`). A trip is described only when
its words name one reservation of the customer's, so the agent's search has one answer, and
only for a customer calling about one reservation (``known["trip"]`` holds its words).

A share of the customers asking for something that charges (a booking, a flight or cabin change,
bags) set a cap sampled from what the policy solver prices it at: on the whole charge
(``Request.max_total``) or, for a booking, per traveller on one direction
(``FlightRule.max_price``). :func:`within_budget` sets caps at or above the price (granted, in
any bin); the ``*/over_budget`` bins (:func:`over_budget`) set one below it: the customer, reading
the live DB's prices, declines the proposal and the DB stays as it is.

A fallback (``Request.if_refused``) follows the request it stands in for: "if you can't change
it, cancel it if you can", "if business costs too much, then economy". The solver decides it only
when the request before it was refused or declined (``Context.unasked`` decides the rest: not
asked, no action); the offline customer asks it only after hearing the refusal
(:mod:`airline_gym.users.intent_fallbacks`); :func:`fallback_condition` states it to the LLM
customer. The ``*/fallback*`` bins come only in combinations after the request they back up.

A customer that does not know its user id is not made: the airline's tools find a user only by
id (no search by name, e-mail or date of birth), so the policy could not serve it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.domain.decisions import Decision
from airline_gym.domain.intents import Intent, Request
from airline_gym.taskgen.context import NOT_ASKED, SolverError
from airline_gym.taskgen.pools import Pools, ReservationFacts
from airline_gym.taskgen.proposals import Build, Proposer, change_cabin

__all__ = [
    "CAP_SHARE",
    "CHARGING",
    "FALLBACK_COMBOS",
    "NOT_ASKED",
    "UNKNOWN_SHARE",
    "cabin_to",
    "fallback",
    "fallback_condition",
    "forget_reservation_ids",
    "over_budget",
    "over_budget_proposer",
    "trip_words",
    "vary",
    "within_budget",
]

#: The share of customers calling about reservations that do not remember their ids.
UNKNOWN_SHARE = 0.13
#: The share of customers asking for something that charges who give a cap it fits under.
CAP_SHARE = 0.35
#: The mix's combinations with a fallback (bins on one reservation, weight): "if you can't
#: change it, cancel it if you can" (granted, refused, or not asked after a granted change);
#: "if business costs too much, then economy".
FALLBACK_COMBOS: tuple[tuple[tuple[str, ...], bool, float], ...] = (
    (("change_flights/basic", "cancel/fallback"), True, 2),
    (("change_flights/basic", "cancel/fallback_refused"), True, 2.5),
    (("change_flights", "cancel/fallback_unasked"), True, 2.5),
    (("change_cabin/business_over_budget", "change_cabin/fallback_economy"), True, 2.5),
)
#: The request kinds that charge.
CHARGING = frozenset({"book", "change_flights", "change_cabin", "add_bags"})


def vary(rng: random.Random, db: PristineDB, intent: Intent) -> Intent:
    """``intent`` with the traits of this module drawn: an unknown reservation id, a cap."""
    return within_budget(rng, db, forget_reservation_ids(rng, db, intent))


def trip_words(record: Mapping[str, Any]) -> str:
    """A reservation as its owner names it without its id: ``from ATL to JFK, first flight on
    2024-05-20`` (the route, and the date of its first flight)."""
    flights = record.get("flights") or []
    first = f", first flight on {flights[0].get('date')}" if flights else ""
    origin, destination = record.get("origin"), record.get("destination")
    route = f"from {origin} to {destination}" if origin != destination else f"from {origin}"
    return f"{route}{first}"


def _described(db: PristineDB, user_id: str, reservation_id: str) -> str | None:
    """``trip_words`` of the reservation when no other reservation of the user has the same."""
    user = db.users.get(user_id) or {}
    words = trip_words(db.reservations[reservation_id])
    others = [r for r in user.get("reservations", []) if r != reservation_id]
    same = [r for r in others if r in db.reservations and trip_words(db.reservations[r]) == words]
    return None if same else words


def forget_reservation_ids(rng: random.Random, db: PristineDB, intent: Intent) -> Intent:
    """``intent``, for :data:`UNKNOWN_SHARE` of the customers calling about one reservation
    (not only to complain about a flight, which they name) whose trip tells it apart, with
    ``reservation_ids`` unknown (out of what it knows) and the trip's words known instead
    (``known["trip"]``)."""
    ids = list(dict.fromkeys(r.reservation_id for r in intent.requests if r.reservation_id))
    named = any(r.reservation_id and r.kind != "compensation" for r in intent.requests)
    if len(ids) != 1 or not named or rng.random() >= UNKNOWN_SHARE:
        return intent
    words = _described(db, intent.user_id, ids[0])
    if words is None:
        return intent
    known = {k: v for k, v in intent.known.items() if k != "reservation_ids"}
    known["trip"] = words
    return replace(intent, known=known, unknown=(*intent.unknown, "reservation_ids"))


def _leg_prices(db: PristineDB, request: Request, decision: Decision) -> list[int]:
    """A granted booking's price per traveller of each direction (out, back), from its write."""
    trip = request.trip
    assert trip is not None and request.cabin is not None
    prices = [0]
    for segment in decision.writes[0].arguments["flights"]:
        day = db.flights[segment["flight_number"]]["dates"][segment["date"]]
        prices[-1] += int(day["prices"][request.cabin])
        if db.flights[segment["flight_number"]]["destination"] == trip.destination:
            prices.append(0)
    return [p for p in prices if p]


def _cap_at(rng: random.Random, price: int, above: bool) -> int | None:
    """A round cap at or above ``price`` (up to $100 more), or one below it (55-92% of it)."""
    if above:
        return -(-price // 10) * 10 + 10 * rng.randrange(11)
    cap = int(price * rng.uniform(0.55, 0.92)) // 10 * 10
    return cap if 0 < cap < price else None


def _capped(
    rng: random.Random, db: PristineDB, request: Request, decision: Decision, above: bool
) -> Request | None:
    """``request`` with a cap at or above (``above``) or below what ``decision`` charges."""
    if decision.outcome != "granted" or not decision.writes:
        return None
    trip = request.trip
    if request.kind == "book" and trip is not None and rng.random() < 0.5:
        prices = _leg_prices(db, request, decision)
        which = rng.randrange(len(prices))
        cap = _cap_at(rng, prices[which], above)
        if cap is None:
            return None
        if which == 0:
            return replace(
                request, trip=replace(trip, outbound=replace(trip.outbound, max_price=cap))
            )
        assert trip.return_rule is not None
        back = replace(trip.return_rule, max_price=cap)
        return replace(request, trip=replace(trip, return_rule=back))
    if not decision.amount or decision.amount <= 0:
        return None  # a refund or a free change: no cap to speak of
    cap = _cap_at(rng, decision.amount, above)
    return None if cap is None else replace(request, max_total=cap)


def within_budget(rng: random.Random, db: PristineDB, intent: Intent) -> Intent:
    """``intent``, for :data:`CAP_SHARE` of the customers asking for something that charges,
    with a cap at or above what the solver charges for one such request (it is still granted)."""
    charging = [i for i, r in enumerate(intent.requests) if r.kind in CHARGING]
    if not charging or rng.random() >= CAP_SHARE:
        return intent
    index = rng.choice(charging)
    from airline_gym.taskgen.solver import solve

    try:
        decision = solve(db, intent).decisions[index]
    except SolverError:
        return intent
    request = _capped(rng, db, intent.requests[index], decision, above=True)
    if request is None:
        return intent
    requests = (*intent.requests[:index], request, *intent.requests[index + 1 :])
    return replace(intent, requests=requests)


def _below_price(
    rng: random.Random, pools: Pools, user_id: str, request: Request | None
) -> Request | None:
    if request is None:
        return None
    from airline_gym.taskgen.solver import solve

    try:
        decision = solve(pools.db, Intent(user_id, "", (request,))).decisions[0]
    except SolverError:
        return None
    return _capped(rng, pools.db, request, decision, above=False)


def over_budget(build: Build) -> Build:
    """``build`` with a cap below what the solver charges for the request built (the customer
    declines)."""

    def capped(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
        return _below_price(rng, pools, facts.user_id, build(rng, pools, facts))

    return capped


def over_budget_proposer(propose: Proposer) -> Proposer:
    """``propose`` with a cap below what the solver charges for the request proposed."""

    def capped(
        rng: random.Random, pools: Pools, user: str | None, taken: frozenset[str]
    ) -> tuple[str, Request] | None:
        found = propose(rng, pools, user, taken)
        if found is None:
            return None
        request = _below_price(rng, pools, found[0], found[1])
        return None if request is None else (found[0], request)

    return capped


def fallback(build: Build) -> Build:
    """``build`` as a fallback of the request before it (``if_refused``)."""

    def second(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
        request = build(rng, pools, facts)
        return None if request is None else replace(request, if_refused=True)

    return second


def fallback_condition(number: int | None) -> str:
    """The LLM customer's condition for a fallback (``number``: the request it backs up, when
    the instructions number them)."""
    before = f"request {number}" if number else "what you asked for before"
    return (
        f"Ask for this only if the agent says it cannot do {before}, or you turn that down; "
        f"if the agent does {before}, do not ask for this at all."
    )


def cabin_to(cabin: str) -> Build:
    """A cabin change of the reservation to ``cabin``."""

    def build(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
        request = change_cabin(rng, pools, facts)
        return None if request is None else replace(request, cabin=cabin)

    return build
