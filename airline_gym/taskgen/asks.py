"""What a generated customer does not know: its reservation id.

A share of the customers that call about a reservation do not remember its id
(:data:`UNKNOWN_SHARE`): they name the trip instead (its route and first flight's date,
:func:`trip_words`), and the agent finds the reservation by reading the profile and the
reservations listed there (the solver's lookups then start with the profile:
:meth:`~airline_gym.taskgen.context.Context.reservation_reads`). A trip is described only when
its words name one reservation of the customer's, so the agent's search has one answer, and
only for a customer calling about one reservation (``known["trip"]`` holds its words).

A customer that does not know its user id is not made: the airline's tools find a user only by
id (no search by name, e-mail or date of birth), so the policy could not serve it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.domain.intents import Intent

__all__ = ["UNKNOWN_SHARE", "forget_reservation_ids", "trip_words", "vary"]

#: The share of customers calling about reservations that do not remember their ids.
UNKNOWN_SHARE = 0.13


def vary(rng: random.Random, db: PristineDB, intent: Intent) -> Intent:
    """``intent`` with the traits of this module drawn: an unknown reservation id."""
    return forget_reservation_ids(rng, db, intent)


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
