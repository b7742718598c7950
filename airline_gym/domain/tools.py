"""The 14 airline tools, with the reference's exact semantics (spec §2).

Each tool takes an :class:`AirlineDB` view plus already-validated keyword arguments and returns
either a plain string or a JSON-serialisable value; failures raise :class:`ToolError`, whose
message the agent sees after ``Error: ``. Argument checking lives in ``validation``. The
docstrings here document our code; what a model reads is the reference's text (``schemas``).
The read tools are here, the write tools in ``tool_writes``, what they share in ``tool_base``;
:data:`TOOLS` lists all 14 by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airline_gym.domain.calculator import CalculationError
from airline_gym.domain.calculator import calculate as _calculate
from airline_gym.domain.database import AirlineDB
from airline_gym.domain.records import Record
from airline_gym.domain.tool_base import (  # re-exported: the tools' public types
    AIRPORTS,
    NEW_CERTIFICATE_IDS,
    NEW_RESERVATION_IDS,
    NOW,
    FlightInfo,
    PassengerInfo,
    PaymentEntry,
    ToolError,
    _direct_flight,
    _flight_date,
    _reservation,
    _search,
    _user,
)
from airline_gym.domain.tool_writes import (
    book_reservation,
    cancel_reservation,
    send_certificate,
    update_reservation_baggages,
    update_reservation_flights,
    update_reservation_passengers,
)

__all__ = [
    "NEW_CERTIFICATE_IDS",
    "NEW_RESERVATION_IDS",
    "NOW",
    "TOOLS",
    "TOOL_TYPES",
    "WRITE_TOOLS",
    "FlightInfo",
    "PassengerInfo",
    "PaymentEntry",
    "ToolError",
    "ToolFunction",
]


def get_user_details(db: AirlineDB, user_id: str) -> Record:
    """Look up a user's profile: name, address, email, date of birth, saved payment methods
    (with gift card and certificate balances), saved passengers, membership tier and the ids of
    all their reservations.

    Args:
        user_id: The user's id, for example 'sara_doe_496'.
    """
    return _user(db, user_id)


def get_reservation_details(db: AirlineDB, reservation_id: str) -> Record:
    """Look up a reservation: its flights with the price paid per passenger, passengers, cabin,
    trip type, payment history, baggage counts, insurance, booking time and status.

    Args:
        reservation_id: The six-character reservation id, for example '8JX2WO'.
    """
    return _reservation(db, reservation_id)


def search_direct_flight(db: AirlineDB, origin: str, destination: str, date: str) -> list[Record]:
    """Find nonstop flights between two airports on a date that can still be booked, with their
    seats left and current prices per cabin.

    Args:
        origin: Three-letter IATA code of the departure airport, for example 'JFK'.
        destination: Three-letter IATA code of the arrival airport, for example 'LAX'.
        date: Departure date as 'YYYY-MM-DD', for example '2024-05-20'.
    """
    return [_direct_flight(f, s, None) for f, s in _search(db, date, origin, destination)]


def search_onestop_flight(
    db: AirlineDB, origin: str, destination: str, date: str
) -> list[list[Record]]:
    """Find itineraries with exactly one connection between two airports on a date. Each result
    is a pair [first leg, second leg] with seats left and current prices per cabin.

    Args:
        origin: Three-letter IATA code of the departure airport, for example 'JFK'.
        destination: Three-letter IATA code of the final arrival airport, for example 'LAX'.
        date: Departure date of the first leg as 'YYYY-MM-DD', for example '2024-05-20'.
    """
    pairs: list[list[Record]] = []
    for flight1, status1 in _search(db, date, origin, None):
        leg1 = _direct_flight(flight1, status1, date)
        arrival = flight1["scheduled_arrival_time_est"]
        # The reference hard-codes the month and does not zero-pad the next day.
        date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
        for flight2, status2 in _search(db, date2, flight1["destination"], destination, arrival):
            pairs.append([leg1, _direct_flight(flight2, status2, date2)])
    return pairs


def list_all_airports(db: AirlineDB) -> list[Record]:
    """List every airport the airline serves, as IATA code and city."""
    return [{"iata": iata, "city": city} for iata, city in AIRPORTS]


def get_flight_status(db: AirlineDB, flight_number: str, date: str) -> str:
    """Get the status of one flight on one date: 'available', 'on time', 'delayed', 'flying',
    'landed' or 'cancelled'.

    Args:
        flight_number: The flight number, for example 'HAT001'.
        date: The flight date as 'YYYY-MM-DD'.
    """
    return _flight_date(db, flight_number, date)["status"]  # type: ignore[no-any-return]


def calculate(db: AirlineDB, expression: str) -> str:
    """Evaluate an arithmetic expression and return the result rounded to two decimals.

    Args:
        expression: The expression to evaluate, using numbers, + - * /, parentheses and spaces,
            for example '(120 + 80) * 2'.
    """
    try:
        return _calculate(expression)
    except CalculationError as exc:
        raise ToolError(str(exc)) from None


def transfer_to_human_agents(db: AirlineDB, summary: str) -> str:
    """Hand the conversation over to a human agent, with a summary of the user's issue.

    Use it only when the user explicitly asks for a human agent, or when the policy and the
    available tools cannot resolve the user's request.

    Args:
        summary: A short summary of the user's issue for the human agent.
    """
    return "Transfer successful"


ToolFunction = Callable[..., Any]


# Tool list order as shown to the LLM (the reference's class definition order).
TOOLS: dict[str, ToolFunction] = {
    f.__name__: f
    for f in (
        book_reservation,
        calculate,
        cancel_reservation,
        get_reservation_details,
        get_user_details,
        list_all_airports,
        search_direct_flight,
        search_onestop_flight,
        send_certificate,
        transfer_to_human_agents,
        update_reservation_baggages,
        update_reservation_flights,
        update_reservation_passengers,
        get_flight_status,
    )
}


WRITE_TOOLS: frozenset[str] = frozenset(
    {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_passengers",
        "update_reservation_baggages",
        "send_certificate",
    }
)

#: Each tool's type as the reference's tools declare it ("read", "write" or "generic"); tau3's
#: results record it on every action check (``tool_type``, null for a name that is no tool).
TOOL_TYPES: dict[str, str] = {
    name: "write"
    if name in WRITE_TOOLS
    else "generic"
    if name in ("calculate", "transfer_to_human_agents")
    else "read"
    for name in TOOLS
}
