"""What the offline customer wants, judged on the episode's live DB: is a proposal what it asked
for, and does its account show a change the agent says it made?

The customer never reads the gold. Its wishes are its request (:class:`~airline_gym.domain.
intents.Request`): its reservation, its flight rule (any option that satisfies the rule, ties
included, on the DB as it is now), its cabin, passengers, bags, payment methods and budget.

:func:`judge` reads a proposal for its content (:mod:`airline_gym.domain.said`): the details it
names, never a phrase. A proposal must name what :mod:`airline_gym.domain.proposals` asks of the
write it would lead to (reservation, new flights, cabin, bags, changed passenger details,
certificate amount, payment method when money moves); a proposal that names less is ``vague``.
:func:`shows_done` is the customer reading its account, as one reads a confirmation e-mail.

To extend: a request kind gets a ``_judge_<kind>`` and a branch in :func:`shows_done`; the
details a proposal must name stay those :func:`~airline_gym.domain.proposals.unnamed` asks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.fares import (
    booking_total,
    change_cost,
    free_bags,
    nonfree_after_adding,
)
from airline_gym.domain.flight_options import Option, acceptable, connects, options
from airline_gym.domain.intents import FlightRule, Request
from airline_gym.domain.proposals import CANCEL_RE
from airline_gym.domain.records import Record
from airline_gym.domain.said import (
    DIGITS_ID_RE,
    FLIGHT_RE,
    PAYMENT_ID_RE,
    RESERVATION_ID_RE,
    bag_counts,
    cabins,
    figures,
    mentions_certificate,
)
from airline_gym.taskgen.facts import directions
from airline_gym.users.intent_words import KIND_RE

__all__ = ["Said", "Verdict", "judge", "read", "shows_done"]

Answer = Literal["yes", "no", "decline", "vague", "none"]

#: Other kinds' words a proposal for a request of this kind may contain without being another
#: change (a booking has bags and a cabin; a flight change may book new flights, ...).
_COMPATIBLE: dict[str, frozenset[str]] = {
    "book": frozenset({"add_bags", "change_cabin", "add_insurance", "edit_passenger"}),
    "change_flights": frozenset({"book", "change_cabin", "add_bags"}),
    "change_cabin": frozenset({"book", "add_bags"}),
    "add_bags": frozenset({"change_cabin"}),
    "cancel": frozenset({"compensation"}),
    "compensation": frozenset({"cancel"}),
    "edit_passenger": frozenset({"change_count"}),
    "change_count": frozenset({"edit_passenger"}),
}


@dataclass(frozen=True)
class Said:
    """The details one agent message names."""

    text: str
    reservations: frozenset[str]
    flights: tuple[str, ...]
    cabins: frozenset[str]
    payments: frozenset[str]
    bags: frozenset[int]
    certificate: bool
    kinds: frozenset[str]

    @property
    def anchored(self) -> bool:
        """Whether it names any detail of a write at all."""
        return bool(
            self.reservations
            or self.flights
            or self.cabins
            or self.payments
            or self.bags
            or (self.certificate and figures(self.text))
        )


def ids(text: str) -> list[str]:
    """The reservation-like ids ``text`` names (a digit-only one counts where the DB has it)."""
    return RESERVATION_ID_RE.findall(text) + DIGITS_ID_RE.findall(text)


def read(text: str, db: AirlineDB) -> Said:
    """The details ``text`` names; reservation ids only those the DB has."""
    return Said(
        text=text,
        reservations=frozenset(r for r in ids(text) if db.reservation(r)),
        flights=tuple(dict.fromkeys(FLIGHT_RE.findall(text))),
        cabins=cabins(text),
        payments=frozenset(PAYMENT_ID_RE.findall(text)),
        bags=bag_counts(text),
        certificate=mentions_certificate(text),
        kinds=frozenset(k for k, rx in KIND_RE.items() if rx.search(text)),
    )


@dataclass(frozen=True)
class Verdict:
    """The customer's answer to a proposal: ``yes``; ``no`` (``why``: what it wants instead);
    ``decline`` (over its budget: it lets the request go); ``vague`` (not enough details to say
    yes to); ``none`` (not a proposal). ``deal``: what it agreed to, for reading its account."""

    answer: Answer
    why: str = ""
    deal: Mapping[str, Any] = field(default_factory=dict)


_VAGUE = Verdict("vague")
_BUDGET = Verdict("decline", "No, that's more than I'm willing to pay.")


def _no(why: str) -> Verdict:
    return Verdict("no", why)


def _pay_ok(request: Request, said: Said, money: bool) -> Verdict | None:
    """An objection to the payment methods named, or ``vague`` when money moves and none of the
    customer's is named (None: fine)."""
    mine = {p.payment_id for p in request.payment}
    if mine and said.payments and not said.payments <= mine:
        return _no(f"No, I'd like to use {' and '.join(sorted(mine))} for this.")
    if money and mine and not said.payments & mine:
        return _VAGUE
    return None


def _choices(
    db: AirlineDB,
    origin: str,
    destination: str,
    rule: FlightRule,
    cabin: str,
    passengers: int,
    before: Sequence[Mapping[str, Any]] = (),
    after: Sequence[Mapping[str, Any]] = (),
) -> list[Option]:
    """The options that satisfy ``rule`` now and fit between the kept segments."""
    found = acceptable(options(db, origin, destination, rule), rule, cabin, passengers)
    return [o for o in found if connects(db, before, o, after)]


def _named_option(said: Said, choices: list[Option]) -> Option | None:
    """The option whose every flight the proposal names, if one."""
    return next((o for o in choices if all(n in said.flights for n in o.numbers)), None)


def _judge_change_flights(request: Request, said: Said, db: AirlineDB, record: Record) -> Verdict:
    cabin = request.cabin or record["cabin"]
    if said.cabins and cabin not in said.cabins:
        return _no(f"No, I want to fly {cabin.replace('_', ' ')}.")
    parts = directions(record)
    segments = record["flights"]
    wanted = {leg.direction: leg for leg in request.legs}
    # the flights of the directions that stay; any other flight named is a proposal for a
    # direction that changes (the same number on the new date is a new flight too)
    kept_numbers = {
        segments[i]["flight_number"] for d, ids in parts.items() if d not in wanted for i in ids
    }
    chosen: dict[str, Option] = {}
    for direction in ("outbound", "return"):
        leg = wanted.get(direction)
        indexes = parts.get(direction) or []
        if leg is None or not indexes:
            continue
        before = [segments[i] for i in parts["outbound"]] if direction == "return" else []
        after_part = [] if direction == "return" else [segments[i] for i in parts["return"]]
        after = [] if "return" in wanted else after_part
        origin = segments[indexes[0]]["origin"]
        destination = leg.destination or segments[indexes[-1]]["destination"]
        if "outbound" in chosen and direction == "return":
            before = chosen["outbound"].flights
        choices = _choices(
            db, origin, destination, leg.rule, cabin, len(record["passengers"]), before, after
        )
        option = _named_option(said, choices)
        if option is None:
            new = [n for n in said.flights if n not in kept_numbers]
            if new and leg.destination:
                return _no(f"No, I want that flight to end in {leg.destination}.")
            return _no("No, that's not the flight I want.") if new else _VAGUE
        if leg.rule.max_price is not None and option.price(cabin) > leg.rule.max_price:
            return _BUDGET
        chosen[direction] = option
    extra = set(said.flights) - kept_numbers - {n for o in chosen.values() for n in o.numbers}
    if extra:
        return _VAGUE  # a list of candidates: which one is meant?
    flights: list[dict[str, Any]] = []
    for direction in ("outbound", "return"):
        if direction in chosen:
            flights += chosen[direction].flights
        else:
            flights += [
                {"flight_number": segments[i]["flight_number"], "date": segments[i]["date"]}
                for i in parts.get(direction) or []
            ]
    cost = change_cost(db, record, cabin, flights)
    if cost is None:
        return _no("No, that's not the flight I want.")
    if request.max_total is not None and cost > request.max_total:
        return _BUDGET
    problem = _pay_ok(request, said, cost != 0)
    return problem or Verdict("yes", deal={"flights": flights, "cabin": cabin})


def _judge_change_cabin(request: Request, said: Said, db: AirlineDB, record: Record) -> Verdict:
    cabin = request.cabin or record["cabin"]
    if cabin not in said.cabins:
        other = said.cabins - {record["cabin"]}
        return _no(f"No, I want {cabin.replace('_', ' ')}.") if other else _VAGUE
    if set(said.flights) - {s["flight_number"] for s in record["flights"]}:
        return _no("No, I want to keep the same flights.")
    flights = [{"flight_number": s["flight_number"], "date": s["date"]} for s in record["flights"]]
    cost = change_cost(db, record, cabin, flights)
    if request.max_total is not None and cost is not None and cost > request.max_total:
        return _BUDGET
    problem = _pay_ok(request, said, cost != 0)
    return problem or Verdict("yes", deal={"cabin": cabin})


def _judge_add_bags(request: Request, said: Said, db: AirlineDB, record: Record) -> Verdict:
    wanted = request.total_bags or 0
    if not said.bags:
        return _VAGUE
    if wanted not in said.bags and wanted - record["total_baggages"] not in said.bags:
        return _no(f"No, I want {wanted} checked bags in total.")
    owner = db.user(record["user_id"])
    tier = owner["membership"] if owner else "regular"
    allowance = free_bags(tier, record["cabin"], len(record["passengers"]))
    nonfree = nonfree_after_adding(
        record["total_baggages"], record["nonfree_baggages"], allowance, wanted
    )
    fee = 50 * (nonfree - record["nonfree_baggages"])
    if request.max_total is not None and fee > request.max_total:
        return _BUDGET
    return _pay_ok(request, said, fee > 0) or Verdict("yes")


def _judge_edit_passenger(request: Request, said: Said, record: Record) -> Verdict:
    new, index = request.new_passenger, request.passenger_index or 0
    if new is None:
        return _VAGUE
    old = record["passengers"][index] if index < len(record["passengers"]) else {}
    lower = said.text.lower()
    values = {"first_name": new.first_name, "last_name": new.last_name, "dob": new.dob}
    changed = [v for k, v in values.items() if str(old.get(k)) != v] or list(values.values())
    return Verdict("yes") if all(v.lower() in lower for v in changed) else _VAGUE


def _trip_choices(request: Request, said: Said, db: AirlineDB) -> list[Option] | Verdict:
    trip, cabin = request.trip, request.cabin or "economy"
    assert trip is not None
    n = len(request.passengers)
    legs = [(trip.origin, trip.destination, trip.outbound)]
    if trip.return_rule is not None:
        legs.append((trip.destination, trip.origin, trip.return_rule))
    chosen: list[Option] = []
    for origin, destination, rule in legs:
        before = chosen[-1].flights if chosen else []
        option = _named_option(said, _choices(db, origin, destination, rule, cabin, n, before))
        if option is None:
            return _no("No, that's not the flight I want.") if said.flights else _VAGUE
        if rule.max_price is not None and option.price(cabin) > rule.max_price:
            return _BUDGET
        chosen.append(option)
    if set(said.flights) - {n for o in chosen for n in o.numbers}:
        return _VAGUE
    return chosen


def _judge_book(request: Request, said: Said, db: AirlineDB, user: Record | None) -> Verdict:
    cabin = request.cabin or "economy"
    if request.trip is None:
        return _VAGUE
    if said.cabins and cabin not in said.cabins:
        return _no(f"No, I want {cabin.replace('_', ' ')}.")
    chosen = _trip_choices(request, said, db)
    if isinstance(chosen, Verdict):
        return chosen
    if cabin not in said.cabins:
        return _VAGUE
    bags = request.total_bags or 0
    if said.bags and bags not in said.bags:
        return _no(f"No, I want {bags} checked bags in total.")
    n = len(request.passengers)
    tier = user["membership"] if user else "regular"
    nonfree = max(0, bags - free_bags(tier, cabin, n))
    total = booking_total(sum(o.price(cabin) for o in chosen), n, request.insurance, nonfree)
    if request.max_total is not None and total > request.max_total:
        return _BUDGET
    problem = _pay_ok(request, said, True)
    flights = [f for o in chosen for f in o.flights]
    return problem or Verdict("yes", deal={"flights": flights, "cabin": cabin})


def judge(request: Request, text: str, db: AirlineDB, user_id: str) -> Verdict:
    """The answer of customer ``user_id`` to ``text`` read as a proposal for ``request`` (see
    the module docstring); ``none`` when it names no detail of a write."""
    said = read(text, db)
    if not said.anchored:
        return Verdict("none")
    mine = request.reservation_id
    if said.reservations and mine not in said.reservations and request.kind != "book":
        return _no("No, that's not the reservation I mean.")
    if "add_insurance" in said.kinds and request.kind not in ("add_insurance", "book"):
        return _no("No, I don't want insurance.")
    allowed = _COMPATIBLE.get(request.kind, frozenset()) | {request.kind}
    if (said.kinds - allowed) and request.kind not in said.kinds:
        return _no("No, I don't want that.")
    kind = request.kind
    if kind == "info":
        return _no("No, I only want to know something.")
    if kind == "book":
        return _judge_book(request, said, db, db.user(user_id))
    if kind == "compensation":
        ok = said.certificate and figures(text) and not said.flights
        return Verdict("yes") if ok else _VAGUE
    record = db.reservation(mine) if mine else None
    if record is None or mine not in said.reservations:
        return _VAGUE
    if kind == "cancel":
        return Verdict("yes") if CANCEL_RE.search(text) else _VAGUE
    if kind == "change_flights":
        return _judge_change_flights(request, said, db, record)
    if kind == "change_cabin":
        return _judge_change_cabin(request, said, db, record)
    if kind == "add_bags":
        return _judge_add_bags(request, said, db, record)
    if kind == "edit_passenger":
        return _judge_edit_passenger(request, said, record)
    return Verdict("yes")  # change_count, add_insurance: what it asked for


def _new_reservations(db: AirlineDB, user_id: str) -> list[Record]:
    user = db.user(user_id)
    known = db.base.reservations
    ids = [r for r in (user or {}).get("reservations", []) if r not in known]
    return [r for r in (db.reservation(i) for i in ids) if r is not None]


def shows_done(
    request: Request, db: AirlineDB, user_id: str, deal: Mapping[str, Any] | None = None
) -> bool:
    """Whether the customer's account shows ``request`` carried out (``deal``: what it agreed
    to, when it did)."""
    kind, deal = request.kind, deal or {}
    record = db.reservation(request.reservation_id) if request.reservation_id else None
    if kind == "cancel":
        return record is not None and bool(record["status"] == "cancelled")
    if kind in ("change_flights", "change_cabin") and record is not None:
        now = [{"flight_number": s["flight_number"], "date": s["date"]} for s in record["flights"]]
        cabin = deal.get("cabin") or request.cabin or record["cabin"]
        flights = deal.get("flights")
        base = db.base.reservations.get(record["reservation_id"])
        moved = flights == now if flights is not None else now != _flights_of(base)
        return bool(record["cabin"] == cabin) and (kind == "change_cabin" or moved)
    if kind == "add_bags" and record is not None:
        return bool(record["total_baggages"] == request.total_bags)
    if kind == "edit_passenger" and record is not None and request.new_passenger is not None:
        index, new = request.passenger_index or 0, request.new_passenger
        people = record["passengers"]
        return index < len(people) and (
            people[index]["first_name"],
            people[index]["last_name"],
            people[index]["dob"],
        ) == (new.first_name, new.last_name, new.dob)
    if kind == "book" and request.trip is not None:
        trip = request.trip
        return any(
            (r["origin"], r["destination"]) == (trip.origin, trip.destination)
            and (not deal.get("flights") or _flights_of(r) == deal["flights"])
            for r in _new_reservations(db, user_id)
        )
    if kind == "compensation":
        user, before = db.user(user_id), db.base.users.get(user_id)
        old = set((before or {}).get("payment_methods", {}))
        return any(
            m.get("source") == "certificate" and key not in old
            for key, m in ((user or {}).get("payment_methods") or {}).items()
        )
    return False


def _flights_of(record: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if record is None:
        return []
    return [{"flight_number": s["flight_number"], "date": s["date"]} for s in record["flights"]]
