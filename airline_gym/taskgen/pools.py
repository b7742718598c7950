"""The DB's pools a sampler draws from: users, reservations by what the policy looks at, routes.

Built once per pristine DB (a few tens of milliseconds) and read-only afterwards. A reservation's
facts are the ones the policy's decisions turn on: cabin, insurance, booked within 24 h of now,
segments flown (landed or flying), cancelled or delayed by the airline. Entities a benchmark task
names can be left out (:func:`airline_gym.taskgen.leaks.benchmark_entities`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.taskgen.facts import FLOWN, directions, under_way
from airline_gym.taskgen.rotation import Rotation

__all__ = ["NOW", "RECENT_SINCE", "Pools", "ReservationFacts", "build_pools"]

#: The policy's "now" (2024-05-15 15:00 EST) and the start of the 24-hour booking window.
NOW = "2024-05-15T15:00:00"
RECENT_SINCE = "2024-05-14T15:00:00"
FUTURE_DATES: tuple[str, ...] = tuple(f"2024-05-{d:02d}" for d in range(16, 31))
#: A granted flight choice is made among at least this many options of the kind it picks (direct
#: or one stop): with 4, an agent proposing the search hits in listed order found the flight
#: within the customer's two tries in 48-64% of the granted flight choices (issue 33's bound: 50%).
MIN_CHOICES = 5


@dataclass(frozen=True)
class ReservationFacts:
    """What the sampler needs to know about one reservation."""

    reservation_id: str
    user_id: str
    cabin: str
    insured: bool
    recent: bool
    flown: bool
    cancelled: tuple[tuple[str, str], ...]  # (flight number, date) the airline cancelled
    delayed: tuple[tuple[str, str], ...]
    passengers: int
    round_trip: bool
    bags: int
    tier: str
    #: Some segment flown and some still to take (neither flown nor cancelled): a trip under way.
    under_way: bool = False
    #: A round trip whose outbound has all been flown and whose return is all still to take.
    return_open: bool = False


@dataclass
class Pools:
    """Indices over one pristine DB (users, reservations, routes with available flights)."""

    db: PristineDB
    users: tuple[str, ...]
    reservations: dict[str, ReservationFacts]
    by_user: dict[str, tuple[str, ...]]
    #: (origin, destination) -> dates with an available direct flight
    routes: dict[tuple[str, str], tuple[str, ...]]
    names: tuple[tuple[str, str], ...]
    #: (origin, destination) -> dates with at least :data:`MIN_CHOICES` available direct
    #: flights (where a flight rule has enough options that a guess is unlikely to find it)
    wide: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    excluded_users: int = 0
    excluded_reservations: int = 0
    #: The draws of one generator run: no id comes back in a pool before the pool is used up.
    rotation: Rotation = field(default_factory=Rotation)
    _lists: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def select(self, name: str, test: Any) -> tuple[str, ...]:
        """Reservation ids passing ``test(facts)``, computed once per ``name``."""
        found = self._lists.get(name)
        if found is None:
            found = self._lists[name] = tuple(
                rid for rid, facts in self.reservations.items() if test(facts)
            )
        return found

    def user(self, user_id: str) -> Mapping[str, Any]:
        """The user's record (read-only by convention)."""
        return self.db.users[user_id]


def _facts(res: Mapping[str, Any], flights: Mapping[str, Any], tier: str) -> ReservationFacts:
    flown = False
    cancelled: list[tuple[str, str]] = []
    delayed: list[tuple[str, str]] = []
    states: list[str | None] = []
    for seg in res["flights"]:
        status = ((flights.get(seg["flight_number"]) or {}).get("dates") or {}).get(seg["date"])
        state = (status or {}).get("status")
        states.append(state)
        if state in FLOWN:
            flown = True
        elif state == "cancelled":
            cancelled.append((seg["flight_number"], seg["date"]))
        elif state == "delayed":
            delayed.append((seg["flight_number"], seg["date"]))
    return ReservationFacts(
        reservation_id=res["reservation_id"],
        user_id=res["user_id"],
        cabin=res["cabin"],
        insured=res.get("insurance") == "yes",
        recent=str(res.get("created_at", "")) >= RECENT_SINCE,
        flown=flown,
        cancelled=tuple(cancelled),
        delayed=tuple(delayed),
        passengers=len(res["passengers"]),
        round_trip=res.get("flight_type") == "round_trip",
        bags=int(res.get("total_baggages") or 0),
        tier=tier,
        under_way=under_way(states),
        return_open=_return_open(res, states),
    )


def _return_open(res: Mapping[str, Any], states: list[str | None]) -> bool:
    """A round trip flown out and not yet flown back (nothing cancelled on the way back)."""
    if res.get("flight_type") != "round_trip":
        return False
    parts = directions(res)  # type: ignore[arg-type]
    out = [states[i] for i in parts["outbound"]]
    back = [states[i] for i in parts["return"]]
    return (
        bool(out and back)
        and all(s in FLOWN for s in out)
        and all(s in ("available", "on time", "delayed") for s in back)
    )


def build_pools(
    db: PristineDB, exclude_users: Iterable[str] = (), exclude_reservations: Iterable[str] = ()
) -> Pools:
    """Index ``db``, leaving out the given users (and all their reservations) and reservations."""
    skip_users = set(exclude_users)
    skip_res = set(exclude_reservations)
    users = tuple(sorted(u for u in db.users if u not in skip_users))
    kept = set(users)
    reservations: dict[str, ReservationFacts] = {}
    excluded = 0  # left out as named by the benchmarks' tasks (or their users' reservations)
    for rid in sorted(db.reservations):
        res = db.reservations[rid]
        if rid in skip_res or res["user_id"] not in kept:
            excluded += 1
            continue
        reservations[rid] = _facts(res, db.flights, db.users[res["user_id"]]["membership"])
    by_user: dict[str, list[str]] = {u: [] for u in users}
    for rid, facts in reservations.items():
        by_user[facts.user_id].append(rid)
    routes: dict[tuple[str, str], set[str]] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for flight in db.flights.values():
        for date, status in (flight.get("dates") or {}).items():
            if date in FUTURE_DATES and status.get("status") == "available":
                routes.setdefault((flight["origin"], flight["destination"]), set()).add(date)
                key = (flight["origin"], flight["destination"], date)
                counts[key] = counts.get(key, 0) + 1
    wide: dict[tuple[str, str], set[str]] = {}
    for (origin, destination, date), n in counts.items():
        if n >= MIN_CHOICES:
            wide.setdefault((origin, destination), set()).add(date)
    names = tuple(
        sorted({(u["name"]["first_name"], u["name"]["last_name"]) for u in db.users.values()})
    )
    return Pools(
        db=db,
        users=users,
        reservations=reservations,
        by_user={u: tuple(v) for u, v in by_user.items()},
        routes={k: tuple(sorted(v)) for k, v in sorted(routes.items())},
        wide={k: tuple(sorted(v)) for k, v in sorted(wide.items())},
        names=names,
        excluded_users=len(db.users) - len(users),
        excluded_reservations=excluded,
    )
