"""Trips under way: the flown bins draw mostly reservations flown out and not yet back.

The DB has about twice as many reservations flown entirely as flown in part; the policy's
interesting case is the trip under way (what may still change, what needs a human), so a flown
bin draws one :data:`UNDER_WAY_SHARE` of the time, whatever the DB's counts.
"""

from __future__ import annotations

import random

from airline_gym.domain.intents import Request
from airline_gym.taskgen.pools import Pools, ReservationFacts
from airline_gym.taskgen.proposals import Build, Proposer, reservation_proposer

__all__ = ["UNDER_WAY_SHARE", "flown_proposer"]

#: The share of a flown bin's draws that are trips under way (the rest: trips entirely in the
#: past).
UNDER_WAY_SHARE = 0.95


def _under_way(f: ReservationFacts) -> bool:
    return f.under_way and not f.cancelled


def _past(f: ReservationFacts) -> bool:
    return f.flown and not f.under_way and not f.cancelled


def flown_proposer(build: Build, name: str) -> Proposer:
    """A reservation with a flown segment and no cancelled one: a trip under way for
    :data:`UNDER_WAY_SHARE` of the draws, else one entirely in the past (the other when the
    first has none to offer)."""
    under = reservation_proposer(_under_way, build, name)
    past = reservation_proposer(_past, build, f"{name}_past")

    def propose(
        rng: random.Random, pools: Pools, user: str | None, taken: frozenset[str]
    ) -> tuple[str, Request] | None:
        first, second = (under, past) if rng.random() < UNDER_WAY_SHARE else (past, under)
        return first(rng, pools, user, taken) or second(rng, pools, user, taken)

    return propose
