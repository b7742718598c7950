"""The six write tools (book, cancel, change flights/bags/passengers, certificate), spec §2."""

from __future__ import annotations

from airline_gym.domain import records
from airline_gym.domain.database import AirlineDB
from airline_gym.domain.policy import BAG_FEE, INSURANCE_FEE
from airline_gym.domain.records import Record
from airline_gym.domain.tool_base import (
    NEW_CERTIFICATE_IDS,
    NEW_RESERVATION_IDS,
    NOW,
    Cabin,
    FlightInfo,
    FlightType,
    Insurance,
    PassengerInfo,
    PaymentEntry,
    ToolError,
    _available_flight_date,
    _flight,
    _reservation,
    _user,
)


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
