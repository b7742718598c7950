"""The airline policy's numbers, in one place: cabins, memberships, bag allowances and fees.

Orders follow the reference's data model (``CabinClass``, ``MembershipLevel``); the figures are
those of the policy the agent reads (free bags by membership and cabin, fees per bag and per
insured passenger) and of the tools that charge them.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "BAG_FEE",
    "CABINS",
    "FREE_BAGS",
    "INSURANCE_FEE",
    "MEMBERSHIPS",
    "Cabin",
    "Membership",
    "free_bags",
]

Cabin = Literal["business", "economy", "basic_economy"]
Membership = Literal["gold", "silver", "regular"]

CABINS: tuple[Cabin, ...] = ("business", "economy", "basic_economy")
"""Cabin classes, in the reference's order."""

MEMBERSHIPS: tuple[Membership, ...] = ("gold", "silver", "regular")
"""Membership levels, in the reference's order."""

FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
"""Free checked bags per passenger, by membership then cabin."""

BAG_FEE = 50
"""Dollars per non-free checked bag."""

INSURANCE_FEE = 30
"""Dollars of travel insurance per passenger."""


def free_bags(membership: str, cabin: str, passengers: int = 1) -> int:
    """Free bags for ``passengers`` travellers; unknown levels count as regular, cabins as basic.

    >>> free_bags("silver", "economy", passengers=2)
    4
    """
    allowance = FREE_BAGS.get(membership, FREE_BAGS["regular"])
    return allowance.get(cabin, allowance["basic_economy"]) * passengers
