"""The 14 airline tools, with the reference's exact semantics (spec §2).

Each tool takes an :class:`AirlineDB` view plus already-validated keyword arguments and returns
either a plain string or a JSON-serialisable value; failures raise :class:`ToolError`, whose
message the agent sees after ``Error: ``. Argument checking lives in ``validation``. The
docstrings here document our code; what a model reads is the reference's text (``schemas``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict

from airline_gym.domain import records
from airline_gym.domain.calculator import CalculationError
from airline_gym.domain.calculator import calculate as _calculate
from airline_gym.domain.database import AirlineDB
from airline_gym.domain.policy import BAG_FEE, INSURANCE_FEE
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


# --- lookups (shared error strings) ----------------------------------------------------------
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


def _settle_update(
    db: AirlineDB, reservation_id: str, payment_id: str, total: int | float
) -> Record:
    """The payment step shared by flight and baggage updates; returns the writable reservation.

    A certificate is always refused (even for 0), a gift card must cover the total (a negative
    total credits it), a credit card has no balance; a non-zero total is added to the history.
    """
    user_id = _reservation(db, reservation_id)["user_id"]
    method = _user(db, user_id)["payment_methods"].get(payment_id)
    if method is None:
        raise ToolError("Payment method not found")
    if method["source"] == "certificate":
        raise ToolError("Certificate cannot be used to update reservation")
    if method["source"] == "gift_card":
        if method["amount"] < total:
            raise ToolError("Gift card balance is not enough")
        db.user_for_write(user_id)["payment_methods"][payment_id]["amount"] -= total  # type: ignore[index]
    if isinstance(total, float) and not -(2**63) <= total < 2**63:
        # the reference's Payment model cannot hold it (a fee computed from a huge float count)
        raise ToolError(f"payment amount {total} is out of range")
    reservation = db.reservation_for_write(reservation_id)
    assert reservation is not None
    if total != 0:
        reservation["payment_history"].append(records.payment(payment_id, int(total)))
    return reservation


# --- read tools ------------------------------------------------------------------------------
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


# --- generic tools ---------------------------------------------------------------------------
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


# --- write tools -----------------------------------------------------------------------------
def book_reservation(
    db: AirlineDB,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: FlightType,
    cabin: Cabin,
    flights: list[FlightInfo],
    passengers: list[PassengerInfo],
    payment_methods: list[PaymentEntry],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Insurance,
) -> Record:
    """Book a new reservation and charge it to the user's stored payment methods.

    Args:
        user_id: The id of the user making the booking, for example 'sara_doe_496'.
        origin: IATA code of the trip's origin airport, for example 'SFO'.
        destination: IATA code of the trip's destination airport, for example 'JFK'.
        flight_type: 'one_way' or 'round_trip'.
        cabin: The cabin for every flight: 'basic_economy', 'economy' or 'business'.
        flights: Every flight of the trip, each as a flight number and date.
        passengers: Every traveller, each with first name, last name and date of birth.
        payment_methods: How the total is paid: stored payment method ids with the whole-dollar
            amount charged to each; the amounts must add up to the exact total price.
        total_baggages: Total number of checked bags on the reservation.
        nonfree_baggages: How many of those bags are paid (50 dollars each).
        insurance: Whether to buy travel insurance (30 dollars per passenger): 'yes' or 'no'.
    """
    user = _user(db, user_id)
    reservation_id = next((r for r in NEW_RESERVATION_IDS if not db.has_reservation(r)), None)
    if reservation_id is None:
        raise ToolError("Too many reservations")
    travellers = [records.passenger(dict(p)) for p in passengers]
    payments = [records.payment(p["payment_id"], int(p["amount"])) for p in payment_methods]
    count = len(travellers)

    segments: list[Record] = []
    booked: list[tuple[str, str]] = []
    total = 0
    for info in flights:
        number, date = info["flight_number"], info["date"]
        flight = _flight(db, number)
        status = _available_flight_date(db, number, date, cabin, count)
        price = status["prices"][cabin]
        segments.append(
            {
                "flight_number": number,
                "origin": flight["origin"],
                "destination": flight["destination"],
                "date": date,
                "price": price,
            }
        )
        booked.append((number, date))
        total += price * count
    if insurance == "yes":
        total += INSURANCE_FEE * count
    total += BAG_FEE * nonfree_baggages  # the raw argument, as the reference

    methods = user["payment_methods"]
    for entry in payments:
        method = methods.get(entry["payment_id"])
        if method is None:
            raise ToolError(f"Payment method {entry['payment_id']} not found")
        if method["source"] in ("gift_card", "certificate") and method["amount"] < entry["amount"]:
            raise ToolError(f"Not enough balance in payment method {entry['payment_id']}")
    paid = sum(entry["amount"] for entry in payments)
    if paid != total:
        raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")

    user = db.user_for_write(user_id)  # type: ignore[assignment]
    methods = user["payment_methods"]
    for entry in payments:
        pid = entry["payment_id"]
        if pid not in methods:
            # The reference removes a certificate listed twice, then fails on the second removal
            # with a KeyError after the earlier deductions: a partial write, kept for parity.
            raise ToolError(repr(pid))
        if methods[pid]["source"] == "gift_card":
            methods[pid]["amount"] -= entry["amount"]
        elif methods[pid]["source"] == "certificate":
            del methods[pid]

    for number, date in booked:
        db.seats_for_write(number, date)[cabin] -= count
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": segments,
        "passengers": travellers,
        "payment_history": payments,
        "created_at": NOW,
        "total_baggages": int(total_baggages),
        "nonfree_baggages": int(nonfree_baggages),
        "insurance": insurance,
        "status": None,
    }
    db.add_reservation(reservation)
    user["reservations"].append(reservation_id)
    return reservation


def cancel_reservation(db: AirlineDB, reservation_id: str) -> Record:
    """Cancel a whole reservation and refund every payment made for it to its original method.

    Args:
        reservation_id: The reservation id, for example 'ZFA04Y'.
    """
    _reservation(db, reservation_id)
    reservation = db.reservation_for_write(reservation_id)
    assert reservation is not None
    history = reservation["payment_history"]
    history.extend([records.payment(p["payment_id"], -p["amount"]) for p in history])
    reservation["status"] = "cancelled"
    return reservation


def update_reservation_flights(
    db: AirlineDB, reservation_id: str, cabin: Cabin, flights: list[FlightInfo], payment_id: str
) -> Record:
    """Change the flights and/or cabin of a reservation and settle the price difference.

    Args:
        reservation_id: The reservation id, for example 'ZFA04Y'.
        cabin: The cabin for the whole updated reservation: 'basic_economy', 'economy' or
            'business'.
        flights: ALL flights of the updated itinerary, each as a flight number and date,
            including the segments that do not change.
        payment_id: The stored payment method that pays (or receives) the difference, for
            example 'credit_card_7815826' or 'gift_card_7815826'.
    """
    reservation = _reservation(db, reservation_id)
    _user(db, reservation["user_id"])  # the owner is looked up before the flights, as tau2 does
    count = len(reservation["passengers"])
    segments: list[Record] = []
    total = 0
    for info in flights:
        number, date = info["flight_number"], info["date"]
        kept = next(
            (
                seg
                for seg in reservation["flights"]
                if seg["flight_number"] == number
                and seg["date"] == date
                and cabin == reservation["cabin"]
            ),
            None,
        )
        if kept is not None:
            total += kept["price"] * count
            segments.append(dict(kept))
            continue
        flight = _flight(db, number)
        status = _available_flight_date(db, number, date, cabin, count)
        segment = {
            "flight_number": number,
            "origin": flight["origin"],
            "destination": flight["destination"],
            "date": date,
            "price": status["prices"][cabin],
        }
        total += segment["price"] * count
        segments.append(segment)
    total -= sum(seg["price"] for seg in reservation["flights"]) * count

    reservation = _settle_update(db, reservation_id, payment_id, total)
    reservation["flights"] = segments
    reservation["cabin"] = cabin
    return reservation


def update_reservation_baggages(
    db: AirlineDB, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> Record:
    """Set the number of checked bags on a reservation, charging 50 dollars per added paid bag.

    Args:
        reservation_id: The reservation id, for example 'ZFA04Y'.
        total_baggages: The new total number of checked bags.
        nonfree_baggages: The new number of paid bags among them.
        payment_id: The stored payment method to charge, for example 'credit_card_7815826' or
            'gift_card_7815826'.
    """
    reservation = _reservation(db, reservation_id)
    _user(db, reservation["user_id"])
    total = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    reservation = _settle_update(db, reservation_id, payment_id, total)
    # Stored as given, like the reference (an integral float stays a float).
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    return reservation


def update_reservation_passengers(
    db: AirlineDB, reservation_id: str, passengers: list[PassengerInfo]
) -> Record:
    """Replace the passenger details of a reservation; the number of passengers cannot change.

    Args:
        reservation_id: The reservation id, for example 'ZFA04Y'.
        passengers: Every passenger of the reservation in the new version, each with first
            name, last name and date of birth.
    """
    reservation = _reservation(db, reservation_id)
    if len(passengers) != len(reservation["passengers"]):
        raise ToolError("Number of passengers does not match")
    reservation = db.reservation_for_write(reservation_id)  # type: ignore[assignment]
    reservation["passengers"] = [records.passenger(dict(p)) for p in passengers]
    return reservation


def send_certificate(db: AirlineDB, user_id: str, amount: int) -> str:
    """Issue a travel certificate of the given value to a user, as compensation. Be careful!

    Args:
        user_id: The id of the user who receives the certificate, for example 'sara_doe_496'.
        amount: The certificate's value in whole dollars.
    """
    user = _user(db, user_id)
    new_id = next((c for c in NEW_CERTIFICATE_IDS if c not in user["payment_methods"]), None)
    if new_id is None:
        raise ToolError("Too many certificates")
    user = db.user_for_write(user_id)  # type: ignore[assignment]
    user["payment_methods"][new_id] = {
        "source": "certificate",
        "id": new_id,
        "amount": float(amount),
    }
    return f"Certificate {new_id} added to user {user_id} with amount {amount}."


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
