"""Proposers about who travels: a corrected passenger (a misspelt name, a wrong date of birth),
someone else in a passenger's place, a different number of travellers."""

from __future__ import annotations

import random

from airline_gym.domain.intents import Passenger, Request
from airline_gym.taskgen.pools import Pools, ReservationFacts

__all__ = ["change_count", "edit_passenger", "replace_passenger", "someone"]


def someone(rng: random.Random, pools: Pools) -> Passenger:
    """A person of the DB's names with a random date of birth."""
    first, last = pools.names[rng.randrange(len(pools.names))]
    dob = f"{rng.randint(1950, 2005)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return Passenger(first, last, dob)


def _retyped(rng: random.Random, name: str) -> str:
    """``name`` with one letter after the first replaced, or two neighbours swapped: the
    spelling a misspelt booking should have had."""
    if len(name) < 3:
        return name + rng.choice("aeinrst")
    at = rng.randrange(1, len(name) - 1)
    if rng.random() < 0.5 and name[at] != name[at + 1]:
        return name[:at] + name[at + 1] + name[at] + name[at + 2 :]
    letter = rng.choice([c for c in "aeilnorstu" if c != name[at].lower()])
    return name[:at] + letter + name[at + 1 :]


def _redated(rng: random.Random, dob: str) -> str:
    """``dob`` with its day or its month off by a little (a wrong date of birth corrected)."""
    year, month, day = (int(x) for x in dob.split("-"))
    if rng.random() < 0.5:
        day = (day - 1 + rng.choice((-2, -1, 1, 2, 10))) % 28 + 1
    else:
        month = (month - 1 + rng.choice((-1, 1, 2))) % 12 + 1
    return f"{year:04d}-{month:02d}-{day:02d}"


def edit_passenger(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """A correction of one passenger: a misspelt first or last name, or a wrong date of birth."""
    index = rng.randrange(facts.passengers)
    old = pools.db.reservations[facts.reservation_id]["passengers"][index]
    first, last, dob = old["first_name"], old["last_name"], old["dob"]
    fix = rng.choice(("first_name", "last_name", "dob"))
    if fix == "first_name":
        first = _retyped(rng, first)
    elif fix == "last_name":
        last = _retyped(rng, last)
    else:
        dob = _redated(rng, dob)
    if (first, last, dob) == (old["first_name"], old["last_name"], old["dob"]):
        return None
    return Request(
        "edit_passenger",
        reservation_id=facts.reservation_id,
        passenger_index=index,
        new_passenger=Passenger(first, last, dob),
    )


def replace_passenger(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """Someone else travels instead of one passenger (not a correction)."""
    index = rng.randrange(facts.passengers)
    old = pools.db.reservations[facts.reservation_id]["passengers"][index]
    new = someone(rng, pools)
    if new.first_name == old["first_name"] or new.last_name == old["last_name"]:
        return None
    return Request(
        "edit_passenger",
        reservation_id=facts.reservation_id,
        passenger_index=index,
        new_passenger=new,
        replaces=True,
    )


def change_count(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
    current = [
        Passenger(p["first_name"], p["last_name"], p["dob"])
        for p in pools.db.reservations[facts.reservation_id]["passengers"]
    ]
    wanted = (
        current[:-1] if len(current) > 1 and rng.random() < 0.5 else [*current, someone(rng, pools)]
    )
    return Request(
        "change_count",
        reservation_id=facts.reservation_id,
        passengers=tuple(wanted),
        insist=rng.randrange(2),
    )
