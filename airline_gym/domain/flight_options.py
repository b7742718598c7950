"""The flights a customer's rule can mean: the options the searches return, the one a rule picks,
and every option that satisfies the rule as well (ties).

Shared by the policy solver (which writes one gold itinerary), the generator (which keeps no task
whose gold depends on a tie) and the offline customer (which accepts any option that satisfies its
rule, evaluated on the episode's live DB). Pure: reads an :class:`AirlineDB`, never writes.

A rule ranks the fitting options by its *criterion* (price in the cabin, first departure, or
time from first departure to last arrival); ``rank`` 0 is the best. The options whose criterion
equals the ranked one's all satisfy the rule (:func:`acceptable`); :func:`pick` breaks such a tie
by price and flight numbers, a choice nobody states, so a task whose gold needs it is ill-posed
(:func:`tied`).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.intents import FlightRule
from airline_gym.domain.records import Record
from airline_gym.domain.tools import search_direct_flight, search_onestop_flight

__all__ = [
    "Option",
    "acceptable",
    "clock_hours",
    "connects",
    "criterion",
    "itinerary_connects",
    "options",
    "pick",
    "ranked",
    "tied",
    "ties_in",
]


def clock_hours(text: str) -> float:
    """``"14:30:00"`` -> 14.5; ``"01:00:00+1"`` -> 25.0."""
    days = 24.0 if "+1" in text else 0.0
    hh, mm, ss = text.split("+")[0].split(":")
    return days + int(hh) + int(mm) / 60 + int(ss) / 3600


def _day_hours(date: str) -> float:
    return dt.date.fromisoformat(date).toordinal() * 24.0


@dataclass(frozen=True)
class Option:
    """One itinerary the agent can find: its segments (search hits with their date)."""

    segments: tuple[Record, ...]

    def price(self, cabin: str) -> int:
        """The price per passenger in ``cabin``."""
        return sum(int(s["prices"][cabin]) for s in self.segments)

    def seats(self, cabin: str) -> int:
        """The seats left in ``cabin`` (the fewest over the segments)."""
        return min(int(s["available_seats"][cabin]) for s in self.segments)

    @property
    def departure(self) -> float:
        """Departure of the first segment, in hours since midnight of the date."""
        return clock_hours(self.segments[0]["scheduled_departure_time_est"])

    @property
    def arrival(self) -> float:
        """Arrival of the last segment, in hours since midnight of the first date."""
        last = self.segments[-1]
        days = 24.0 if last["date"] != self.segments[0]["date"] else 0.0
        return days + clock_hours(last["scheduled_arrival_time_est"])

    @property
    def flights(self) -> list[dict[str, str]]:
        """The segments as ``FlightInfo`` arguments."""
        return [{"flight_number": s["flight_number"], "date": s["date"]} for s in self.segments]

    @property
    def numbers(self) -> tuple[str, ...]:
        """The flight numbers, in order."""
        return tuple(s["flight_number"] for s in self.segments)


def options(db: AirlineDB, origin: str, destination: str, rule: FlightRule) -> list[Option]:
    """Every itinerary the searches a rule needs return (one-stops only when they compete)."""
    found: list[Option] = []
    if rule.pick != "exact" or len(rule.flight_numbers) == 1:
        for hit in search_direct_flight(db, origin, destination, rule.date):
            found.append(Option((dict(hit, date=rule.date),)))
    if (rule.pick == "exact" and len(rule.flight_numbers) > 1) or (
        rule.pick != "exact" and not rule.direct_only
    ):
        found.extend(
            Option(tuple(pair))
            for pair in search_onestop_flight(db, origin, destination, rule.date)
        )
    return found


def _fits(option: Option, rule: FlightRule, cabin: str, passengers: int) -> bool:
    if option.seats(cabin) < passengers:
        return False
    if rule.depart_after is not None and option.departure < clock_hours(rule.depart_after):
        return False
    if rule.depart_before is not None and option.departure > clock_hours(rule.depart_before):
        return False
    return not (rule.arrive_before is not None and option.arrival > clock_hours(rule.arrive_before))


def criterion(option: Option, rule: FlightRule, cabin: str) -> Any:
    """What ``rule`` ranks options by (smaller is better)."""
    pick = rule.pick
    if pick == "cheapest":
        return option.price(cabin)
    if pick == "earliest":
        return option.departure
    if pick == "latest":
        return -option.departure
    if pick == "fastest":
        return option.arrival - option.departure
    return option.numbers != tuple(rule.flight_numbers)  # exact: the named flights first


def ranked(found: Iterable[Option], rule: FlightRule, cabin: str, passengers: int) -> list[Option]:
    """The options that fit ``rule`` (seats, time bounds, the named flights of ``exact``), best
    first."""
    fitting = [o for o in found if _fits(o, rule, cabin, passengers)]
    if rule.pick == "exact":
        fitting = [o for o in fitting if o.numbers == tuple(rule.flight_numbers)]
    # ties broken as the solver always has: cheapest by departure, the others by price
    second = (lambda o: o.departure) if rule.pick == "cheapest" else (lambda o: o.price(cabin))
    return sorted(fitting, key=lambda o: (criterion(o, rule, cabin), second(o), o.numbers))


def pick(found: Iterable[Option], rule: FlightRule, cabin: str, passengers: int) -> Option | None:
    """The itinerary the rule comes to, a tie broken by departure (cheapest) or price (the
    others), then flight numbers; None when nothing fits."""
    best = ranked(found, rule, cabin, passengers)
    return best[rule.rank] if rule.rank < len(best) else None


def acceptable(
    found: Iterable[Option], rule: FlightRule, cabin: str, passengers: int
) -> list[Option]:
    """Every fitting option whose criterion equals that of the one the rule ranks at
    ``rule.rank``: each satisfies the rule as stated (empty when nothing fits)."""
    best = ranked(found, rule, cabin, passengers)
    if rule.rank >= len(best):
        return []
    target = criterion(best[rule.rank], rule, cabin)
    return [o for o in best if criterion(o, rule, cabin) == target]


def tied(found: Iterable[Option], rule: FlightRule, cabin: str, passengers: int) -> bool:
    """Whether the rule's pick ties with another option: which one is meant is unstated (for
    ``rank`` > 0 also a tie among the better ones, which leaves the rank unclear)."""
    return ties_in(ranked(found, rule, cabin, passengers), rule, cabin)


def ties_in(best: list[Option], rule: FlightRule, cabin: str) -> bool:
    """:func:`tied` on options :func:`ranked` already."""
    if rule.rank >= len(best):
        return False
    values = [criterion(o, rule, cabin) for o in best[: rule.rank + 2]]
    return len(set(values)) < len(values)


def _times(db: AirlineDB, flight: Mapping[str, Any]) -> tuple[float, float] | None:
    """(departure, arrival) of one flight-date, in hours on one clock; None when unknown."""
    record = db.flight(str(flight.get("flight_number")))
    date = flight.get("date")
    if record is None or not isinstance(date, str):
        return None
    try:
        day = _day_hours(date)
        return (
            day + clock_hours(record["scheduled_departure_time_est"]),
            day + clock_hours(record["scheduled_arrival_time_est"]),
        )
    except (ValueError, KeyError):
        return None


def itinerary_connects(
    db: AirlineDB,
    flights: Sequence[Mapping[str, Any]],
    new: Collection[tuple[str, str]] | None = None,
) -> bool:
    """Whether each flight departs no earlier than the one before it arrives (unknown flights
    never connect). With ``new`` ((flight number, date) pairs), only the pairs of adjacent
    flights that include a new one are checked: kept segments stay as they were booked."""
    times = [_times(db, f) for f in flights]
    known = [t for t in times if t is not None]
    if len(known) != len(times):
        return False
    keys = [(str(f.get("flight_number")), str(f.get("date"))) for f in flights]
    return all(
        b[0] >= a[1]
        for (a, b), (ka, kb) in zip(
            itertools.pairwise(known), itertools.pairwise(keys), strict=True
        )
        if new is None or ka in new or kb in new
    )


def connects(
    db: AirlineDB,
    before: Sequence[Mapping[str, Any]],
    option: Option,
    after: Sequence[Mapping[str, Any]] = (),
) -> bool:
    """Whether ``option`` fits between the kept segments ``before`` and ``after``."""
    return itinerary_connects(db, [*before, *option.flights, *after])
