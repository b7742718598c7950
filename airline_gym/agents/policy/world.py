"""The world as an agent has seen it: a DB view built from its own tool calls and their results.

:class:`SeenWorld` takes each tool call the agent made with the result the env returned
(``ingest``) and keeps the users, reservations and flight-dates those results show, the latest
result winning. :meth:`SeenWorld.view` turns them into an :class:`AirlineDB` on which the policy
solver's rules (``airline_gym.taskgen.rules_*``) run as they run on the real DB: a search there
returns what the same search returned here, a flight's status is what ``get_flight_status``
said, a profile's balances what the last ``get_user_details`` showed. Nothing here is read from
the task or the DB files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from airline_gym.domain.database import AirlineDB, PristineDB, canonical_json

__all__ = ["SeenWorld", "call_key"]

#: The read tools whose results describe a record of the DB.
_RESERVATION_RESULTS = frozenset(
    {
        "get_reservation_details",
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
    }
)

#: A flight-date ``get_flight_status`` called available but no search priced: bookable as far
#: as the agent knows, though not a search hit until a search shows its seats and prices.
_UNPRICED = {"status": "available (not searched)"}

_WRITES = _RESERVATION_RESULTS - {"get_reservation_details"} | {"send_certificate"}


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """A call's identity: its name and arguments, canonically."""
    return canonical_json([name, dict(arguments)])


class SeenWorld:
    """What the agent's tool results showed, as records."""

    def __init__(self) -> None:
        self.users: dict[str, dict[str, Any]] = {}
        self.reservations: dict[str, dict[str, Any]] = {}
        self.flights: dict[str, dict[str, Any]] = {}
        #: Every call made that returned a result (not an error), by :func:`call_key`.
        self.made: set[str] = set()
        #: A write went through since the profile was last read (balances may have changed).
        self.user_stale = False

    def ingest(self, name: str, arguments: Mapping[str, Any], content: str) -> Any:
        """Record one call and its result text; returns the parsed result (None on an error)."""
        if content.startswith("Error:"):
            return None
        self.made.add(call_key(name, arguments))
        if name in _WRITES:  # balances and reservation lists change: read the profile again
            self.user_stale = True
            self.made -= {key for key in self.made if key.startswith('["get_user_details"')}
        try:
            result = json.loads(content)
        except ValueError:
            result = content
        if name == "get_user_details" and isinstance(result, dict):
            self.users[result["user_id"]] = result
            self.user_stale = False
        elif name in _RESERVATION_RESULTS and isinstance(result, dict):
            self.reservations[result["reservation_id"]] = result
            for segment in result.get("flights") or []:
                self._flight(segment)
        elif name == "get_flight_status" and isinstance(result, str):
            date = str(arguments.get("date"))
            flight = self._flight({"flight_number": arguments.get("flight_number")})
            known = flight["dates"].get(date)
            if not (known and known["status"] == result):  # keep a search's prices
                flight["dates"][date] = {"status": result}
        elif name == "search_direct_flight" and isinstance(result, list):
            for hit in result:
                self._hit(hit, str(arguments.get("date")))
        elif name == "search_onestop_flight" and isinstance(result, list):
            for pair in result:
                for hit in pair:
                    self._hit(hit, str(hit.get("date")))
        return result

    def status(self, number: str, date: str) -> str | None:
        """The status the agent last saw for one flight-date (None: never seen)."""
        seen = self.flights.get(number, {}).get("dates", {}).get(date)
        if seen is None:
            return None
        return "available" if "prices" in seen else str(seen["status"])

    def _flight(self, segment: Mapping[str, Any]) -> dict[str, Any]:
        number = str(segment.get("flight_number"))
        flight = self.flights.setdefault(
            number,
            {
                "flight_number": number,
                "origin": segment.get("origin"),
                "destination": segment.get("destination"),
                "scheduled_departure_time_est": "00:00:00",
                "scheduled_arrival_time_est": "00:00:00",
                "dates": {},
            },
        )
        for key in ("origin", "destination"):
            flight[key] = segment.get(key) or flight[key]
        return flight

    def _hit(self, hit: Mapping[str, Any], date: str) -> None:
        flight = self._flight(hit)
        for key in ("scheduled_departure_time_est", "scheduled_arrival_time_est"):
            flight[key] = hit[key]
        flight["dates"][date] = {
            "status": "available",
            "available_seats": dict(hit["available_seats"]),
            "prices": dict(hit["prices"]),
        }

    def view(self) -> AirlineDB:
        """The seen records as a DB view the policy's rules can read."""
        flights = {}
        for number, flight in self.flights.items():
            if flight["origin"] is None:  # known by its status only: no route to search on
                continue
            dates = {
                day: status if "prices" in status or status["status"] != "available" else _UNPRICED
                for day, status in flight["dates"].items()
            }
            flights[number] = {**flight, "dates": dates}
        base = PristineDB(
            flights=flights, users=dict(self.users), reservations=dict(self.reservations)
        )
        return base.fork()
