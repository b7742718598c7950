"""Normalise raw db.json records into the reference's serialised shape.

The reference parses db.json into pydantic models and dumps them back: keys come out in
model field order, optional fields appear as ``null``, balances become floats and unknown keys
are dropped. Both the JSON the agent sees and the DB hash depend on that shape, so every record
is normalised once at load time and tools keep it that way.
"""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]

_STATUS_FIELDS: dict[str, tuple[str, ...]] = {
    "available": ("available_seats", "prices"),
    "landed": ("actual_departure_time_est", "actual_arrival_time_est"),
    "cancelled": (),
    "delayed": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "on time": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "flying": ("actual_departure_time_est", "estimated_arrival_time_est"),
}


def flight_date_status(raw: Record) -> Record:
    """One flight-date status object (a union keyed by ``status``)."""
    status = raw["status"]
    out: Record = {"status": status}
    for field in _STATUS_FIELDS[status]:
        value = raw[field]
        out[field] = dict(value) if isinstance(value, dict) else value
    return out


def _pick(raw: Record, *fields: str) -> Record:
    """``raw``'s ``fields``, in that order."""
    return {name: raw[name] for name in fields}


def flight(raw: Record) -> Record:
    """A flight with its 30 dated statuses."""
    times = ("scheduled_departure_time_est", "scheduled_arrival_time_est")
    out = _pick(raw, "flight_number", "origin", "destination", *times)
    out["dates"] = {day: flight_date_status(s) for day, s in raw["dates"].items()}
    return out


def passenger(raw: Record) -> Record:
    """A passenger; unknown keys are dropped."""
    return {"first_name": raw["first_name"], "last_name": raw["last_name"], "dob": raw["dob"]}


def payment_method(raw: Record) -> Record:
    """A stored payment method: credit card, gift card or certificate."""
    out: Record = {"source": raw["source"], "id": raw["id"]}
    if raw["source"] == "credit_card":
        out["brand"] = raw["brand"]
        out["last_four"] = raw["last_four"]
    else:
        out["amount"] = float(raw["amount"])
    return out


def user(raw: Record) -> Record:
    """A user profile."""
    address = raw["address"]
    return {
        "user_id": raw["user_id"],
        "name": {"first_name": raw["name"]["first_name"], "last_name": raw["name"]["last_name"]},
        "address": {
            "address1": address["address1"],
            "address2": address.get("address2"),
            "city": address["city"],
            "country": address["country"],
            "state": address["state"],
            "zip": address["zip"],
        },
        "email": raw["email"],
        "dob": raw["dob"],
        "payment_methods": {k: payment_method(v) for k, v in raw["payment_methods"].items()},
        "saved_passengers": [passenger(p) for p in raw["saved_passengers"]],
        "membership": raw["membership"],
        "reservations": list(raw["reservations"]),
    }


def reservation_flight(raw: Record) -> Record:
    """One booked segment with its price at booking time."""
    return _pick(raw, "flight_number", "origin", "destination", "date", "price")


def payment(payment_id: str, amount: int) -> Record:
    """One payment-history entry (negative amounts are refunds)."""
    return {"payment_id": payment_id, "amount": amount}


def reservation(raw: Record) -> Record:
    """A reservation; ``status`` is always present (``None`` unless cancelled)."""
    return {
        "reservation_id": raw["reservation_id"],
        "user_id": raw["user_id"],
        "origin": raw["origin"],
        "destination": raw["destination"],
        "flight_type": raw["flight_type"],
        "cabin": raw["cabin"],
        "flights": [reservation_flight(f) for f in raw["flights"]],
        "passengers": [passenger(p) for p in raw["passengers"]],
        "payment_history": [payment(p["payment_id"], p["amount"]) for p in raw["payment_history"]],
        "created_at": raw["created_at"],
        "total_baggages": raw["total_baggages"],
        "nonfree_baggages": raw["nonfree_baggages"],
        "insurance": raw["insurance"],
        "status": raw.get("status"),
    }
