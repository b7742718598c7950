"""What an agent looks up for a request, and what the policy decides on what it has seen.

:func:`wanted` lists the lookups the policy needs for one request that the agent has not made yet
(the profile, the reservations concerned, the status of their flights, the searches that price a
change or find the customer's flights); :func:`decide` applies the airline policy to what those
lookups showed, by running the policy solver's rule for the request's kind
(:data:`airline_gym.taskgen.solver.RULES`) on the :class:`~.world.SeenWorld`'s view. The
solver is policy code: it reads only the DB it is given, here the records the agent saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from airline_gym.agents.policy.world import SeenWorld, call_key
from airline_gym.domain.decisions import Call, Decision
from airline_gym.domain.intents import Intent, Request
from airline_gym.taskgen.asks import trip_words
from airline_gym.taskgen.context import Context
from airline_gym.taskgen.facts import call, directions, reservation_read, searches, user_read
from airline_gym.taskgen.solver import RULES

__all__ = ["decide", "locate", "resolve", "wanted"]

#: Kinds whose decision depends on the status of the reservation's flights.
_STATUS_KINDS = frozenset({"cancel", "change_flights", "change_cabin", "compensation"})
#: Kinds that price the reservation's flights in a cabin today.
_PRICE_KINDS = frozenset({"change_flights", "change_cabin"})


def _reservation_ids(world: SeenWorld, user_id: str, request: Request) -> list[str]:
    """The reservations the request is about (all the customer's when it names none)."""
    if request.reservation_id:
        return [request.reservation_id]
    everything = request.kind == "compensation" or request.question == "total_upcoming_cost"
    user = world.users.get(user_id)
    return list(user["reservations"]) if everything and user else []


def _segments(world: SeenWorld, rids: Sequence[str]) -> list[dict[str, Any]]:
    return [s for rid in rids for s in (world.reservations.get(rid) or {}).get("flights") or []]


def wanted(world: SeenWorld, user_id: str, request: Request) -> list[Call]:
    """The lookups the policy needs for ``request`` that the agent has not made yet, in the
    order to make them (what they show decides what else is needed: call again after)."""
    calls: list[Call] = []
    if user_id not in world.users or world.user_stale:
        calls.append(user_read(user_id))
    rids = _reservation_ids(world, user_id, request)
    calls += [reservation_read(rid) for rid in rids if rid not in world.reservations]
    needs_status = request.kind in _STATUS_KINDS or request.question == "total_upcoming_cost"
    for segment in _segments(world, rids) if needs_status else []:
        number, date = segment["flight_number"], segment["date"]
        if date not in world.flights.get(number, {}).get("dates", {}):
            calls.append(call("get_flight_status", flight_number=number, date=date))
        elif request.kind in _PRICE_KINDS and world.status(number, date) == "available":
            calls.append(
                call(
                    "search_direct_flight",
                    origin=segment["origin"],
                    destination=segment["destination"],
                    date=date,
                )
            )
    calls += _flight_searches(world, request)
    out: list[Call] = []
    for c in calls:
        if call_key(c.name, c.arguments) not in world.made and c not in out:
            out.append(c)
    return out


def _flight_searches(world: SeenWorld, request: Request) -> list[Call]:
    """The searches that find the flights the customer's rules ask for."""
    if request.kind == "book" and request.trip is not None:
        trip = request.trip
        found = list(searches(trip.origin, trip.destination, trip.outbound))
        if trip.return_rule is not None:
            found += searches(trip.destination, trip.origin, trip.return_rule)
        return found
    reservation = world.reservations.get(request.reservation_id or "")
    if request.kind != "change_flights" or reservation is None:
        return []
    parts = directions(reservation)
    segments = reservation["flights"]
    found = []
    for leg in request.legs:
        indexes = parts[leg.direction]
        if indexes:
            origin = segments[indexes[0]]["origin"]
            destination = leg.destination or segments[indexes[-1]]["destination"]
            found += searches(origin, destination, leg.rule)
    return found


def resolve(world: SeenWorld, user_id: str, request: Request) -> Request:
    """``request`` with its reservation named when the customer named only a flight of it."""
    if request.reservation_id or not request.flight_number:
        return request
    for rid in _reservation_ids(world, user_id, request):
        for segment in _segments(world, [rid]):
            if (segment["flight_number"], segment["date"]) == (
                request.flight_number,
                request.flight_date,
            ):
                return replace(request, reservation_id=rid)
    return request


def locate(world: SeenWorld, user_id: str, trip: str) -> tuple[list[Call], str | None]:
    """The customer's reservation whose trip is ``trip`` (its words): (the lookups still
    needed to find it, its id once found). The profile lists the reservations; each is read."""
    user = world.users.get(user_id)
    if user is None:
        return [user_read(user_id)], None
    mine = list(user["reservations"])
    for rid in mine:
        record = world.reservations.get(rid)
        if record is not None and trip_words(record) == trip:
            return [], rid
    return [reservation_read(rid) for rid in mine if rid not in world.reservations], None


def decide(
    world: SeenWorld,
    user_id: str,
    name: str,
    earlier: Sequence[Decision],
    requests: Sequence[Request],
) -> Decision | None:
    """The policy's decision on the last of ``requests`` from what the agent has seen (None
    when what it saw is not enough to decide)."""
    intent = Intent(user_id, name, tuple(requests))
    index = len(requests) - 1
    ctx = Context(world.view(), intent, tuple(earlier), index, requests[index])
    try:
        return RULES[requests[index].kind](ctx)
    except (LookupError, TypeError, ValueError):  # a record it has not seen
        return None


def missing_reads(world: SeenWorld, decision: Decision) -> list[Call]:
    """The lookups the decision rests on that the agent has not made."""
    return [c for c in decision.reads if call_key(c.name, c.arguments) not in world.made]


def call_of(name: str, **arguments: Any) -> Call:
    """A tool call the agent makes."""
    return call(name, **arguments)
