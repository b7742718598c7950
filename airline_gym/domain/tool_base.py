"""What the airline tools share: fixed ids and dates, argument types, ``ToolError`` and lookups."""

from __future__ import annotations

from typing import Literal, TypedDict

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.records import Record
from airline_gym.errors import ActionError

NOW = "2024-05-15T15:00:00"


NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")


NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")


AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)


Cabin = Literal["business", "economy", "basic_economy"]


FlightType = Literal["round_trip", "one_way"]


Insurance = Literal["yes", "no"]


class FlightInfo(TypedDict):
    """One flight of an itinerary."""

    flight_number: str
    date: str


class PassengerInfo(TypedDict):
    """One traveller."""

    first_name: str
    last_name: str
    dob: str


class PaymentEntry(TypedDict):
    """One payment towards a booking."""

    payment_id: str
    amount: int


class ToolError(ActionError):
    """A tool refused the call; ``str(error)`` is shown to the agent after ``Error: ``."""


def _user(db: AirlineDB, user_id: str) -> Record:
    user = db.user(user_id)
    if user is None:
        raise ToolError(f"User {user_id} not found")
    return user


def _reservation(db: AirlineDB, reservation_id: str) -> Record:
    reservation = db.reservation(reservation_id)
    if reservation is None:
        raise ToolError(f"Reservation {reservation_id} not found")
    return reservation


def _flight(db: AirlineDB, number: str) -> Record:
    flight = db.flight(number)
    if flight is None:
        raise ToolError(f"Flight {number} not found")
    return flight


def _flight_date(db: AirlineDB, number: str, date: str) -> Record:
    dates = _flight(db, number)["dates"]
    if date not in dates:
        raise ToolError(f"Flight {number} not found on date {date}")
    return dates[date]  # type: ignore[no-any-return]


def _available_flight_date(db: AirlineDB, number: str, date: str, cabin: str, seats: int) -> Record:
    status = _flight_date(db, number, date)
    if status["status"] != "available":
        raise ToolError(f"Flight {number} not available on date {date}")
    if status["available_seats"][cabin] < seats:
        raise ToolError(f"Not enough seats on flight {number}")
    return status


def _direct_flight(flight: Record, status: Record, date: str | None) -> Record:
    return {
        "flight_number": flight["flight_number"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "status": "available",
        "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
        "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
        "date": date,
        "available_seats": dict(status["available_seats"]),
        "prices": dict(status["prices"]),
    }


def _search(
    db: AirlineDB, date: str, origin: str, destination: str | None, leave_after: str | None = None
) -> list[tuple[Record, Record]]:
    hits = []
    for flight in db.flights_from(origin):
        if destination is not None and flight["destination"] != destination:
            continue
        status = flight["dates"].get(date)
        if status is None or status["status"] != "available":
            continue
        if leave_after is not None and not flight["scheduled_departure_time_est"] >= leave_after:
            continue
        hits.append((flight, status))
    return hits
