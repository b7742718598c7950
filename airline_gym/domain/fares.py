"""What the airline charges: bag allowances and fees, insurance, and the price of a change.

Pure figures and formulas that the policy solver, the offline customer (its budget) and grading
share, so that all three price a request alike. Policy clauses are cited in our words.

>>> free_bags("silver", "economy", 2)
4
>>> nonfree_after_adding(total=2, nonfree=0, allowance=1, wanted=4)  # two free bags stay free
2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.database import AirlineDB

__all__ = [
    "BAG_FEE",
    "FREE_BAGS",
    "INSURANCE_FEE",
    "MAX_PASSENGERS",
    "booking_total",
    "change_cost",
    "free_bags",
    "nonfree_after_adding",
    "segment_price",
]

#: Free checked bags per passenger, by the booking user's tier and the cabin (policy: "Checked
#: bag allowance").
FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
BAG_FEE = 50  # policy: each extra bag is 50 dollars
INSURANCE_FEE = 30  # policy: insurance is 30 dollars per passenger
MAX_PASSENGERS = 5  # policy: at most five passengers per reservation


def free_bags(membership: str, cabin: str, passengers: int) -> int:
    """The free checked bags of a reservation (policy: allowance per passenger x passengers)."""
    return FREE_BAGS[membership][cabin] * passengers


def nonfree_after_adding(total: int, nonfree: int, allowance: int, wanted: int) -> int:
    """The paid bags once a reservation holding ``total`` bags (``nonfree`` of them paid) has
    ``wanted`` in all, under today's free ``allowance``.

    Our reading of the policy ("Checked bag allowance"; bags are added, never removed): bags
    are priced when they are added. Bags already on the reservation keep their status, free or
    paid, as kept flight segments keep their price; so after a cabin downgrade lowered the
    allowance, no bag already there is charged again. A new bag is free while the allowance
    has room left over the free bags already there, else it costs :data:`BAG_FEE`.
    """
    room = max(0, allowance - (total - nonfree))
    added = max(0, wanted - total)
    return nonfree + max(0, added - room)


def booking_total(price: int, passengers: int, insurance: bool, nonfree: int) -> int:
    """What a booking costs: ``price`` per passenger (all segments), insurance, paid bags."""
    return price * passengers + (INSURANCE_FEE * passengers if insurance else 0) + BAG_FEE * nonfree


def segment_price(
    db: AirlineDB, reservation: Mapping[str, Any], cabin: str, flight: Mapping[str, Any]
) -> int | None:
    """What ``update_reservation_flights`` charges for one segment per passenger: a kept
    segment in the same cabin keeps its price (policy: kept segments are not repriced), any
    other pays today's price; None when the flight-date cannot be priced (not available)."""
    key = (flight.get("flight_number"), flight.get("date"))
    if cabin == reservation["cabin"]:
        for segment in reservation["flights"]:
            if (segment["flight_number"], segment["date"]) == key:
                return int(segment["price"])
    record = db.flight(str(key[0]))
    day = record["dates"].get(str(key[1])) if record else None
    if not day or day.get("status") != "available":
        return None
    return int(day["prices"][cabin])


def change_cost(
    db: AirlineDB,
    reservation: Mapping[str, Any],
    cabin: str,
    flights: Sequence[Mapping[str, Any]],
) -> int | None:
    """The difference a change to ``flights`` in ``cabin`` charges (negative: a refund), for
    all passengers; None when a new segment cannot be priced."""
    prices = [segment_price(db, reservation, cabin, f) for f in flights]
    if any(p is None for p in prices):
        return None
    passengers = len(reservation["passengers"])
    old = sum(int(s["price"]) for s in reservation["flights"]) * passengers
    return sum(int(p or 0) for p in prices) * passengers - old
