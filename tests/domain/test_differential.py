"""Differential tests: our 14 airline tools against the reference tau2 implementation.

A seeded generator produces random, *well-typed* tool-call sequences (the calls an LLM agent can
make within the JSON schemas), drawing ids, dates, prices and balances from the live reference
state so that most calls succeed and every documented error path is reached too. Every call
runs on both sides from the same start state, and the ``content`` and ``error`` of each result
must be identical. After every write call, every record either side has touched must serialise
identically; since both sides start from the same pristine DB (asserted), that is exactly "same
DB hash", and it names the record that differs. The whole-DB hashes (``db_hash`` against the
reference's) are compared after every write in every fifth sequence and at the end of every
sequence, after re-reading each touched user and reservation.

Speed: building a reference environment takes ~0.3 s and hashing its 7 MB database ~0.1 s, too
slow for hundreds of sequences. So one reference environment is reused with copy-on-write done
by this harness, independently of our implementation: before a write call, every record the
reference tool can mutate (the user, the flights, the reservation and its owner) is replaced by
a deep copy, and between sequences the three tables are reset to the pristine objects. The DB
hash of the reference side is assembled from cached per-record fragments with the reference's
own formula (``json.dumps(model_dump(), sort_keys=True, default=str)``); that shortcut is checked
against ``env.get_db_hash()`` regularly, and after every chunk of sequences both pristine bases
(ours and the reference's objects) are checked to be untouched.

Both sides read the reference package's own db.json, so they start from the same bytes.

Set ``AIRLINE_GYM_DIFF_SEQUENCES`` (default 300) and ``AIRLINE_GYM_DIFF_SEED`` (default 0) to
run more or other sequences. A failure prints the seed and the exact calls that reproduce it;
feed them to :func:`run_both` to replay.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import json
import os
import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest
from optional_libs import import_optional

from airline_gym.domain.database import (
    PRISTINE_DB_HASH,
    AirlineDB,
    PristineDB,
    canonical_json,
    db_hash,
    load_pristine,
)
from airline_gym.domain.toolbox import ToolResult, execute
from airline_gym.domain.tools import TOOLS, WRITE_TOOLS
from airline_gym.testing.bench_common import sample_booking
from airline_gym.testing.soak_reference import ReferenceReplayer

pytestmark = [
    pytest.mark.reference,
    # The reference stores integral-float bag counts raw; pydantic warns when dumping them.
    pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"),
]

_tau2_env = import_optional("tau2.domains.airline.environment")
_tau2_message = import_optional("tau2.data_model.message")
_tau2_utils = import_optional("tau2.domains.airline.utils")
_loguru = import_optional("loguru")

get_environment = _tau2_env.get_environment
ToolCall = _tau2_message.ToolCall
REFERENCE_DB_PATH: str = str(_tau2_utils.AIRLINE_DB_PATH)

Args = dict[str, Any]
Call = tuple[str, Args]

TABLES: tuple[str, ...] = ("flights", "reservations", "users")
NUM_SEQUENCES = int(os.environ.get("AIRLINE_GYM_DIFF_SEQUENCES", "300"))
FIRST_SEED = int(os.environ.get("AIRLINE_GYM_DIFF_SEED", "0"))
NUM_CHUNKS = 10
FULL_HASH_EVERY = 5  # sequences that compare whole-DB hashes after every write, not just at the end
FULL_REFERENCE_HASH_EVERY = 25  # sequences between checks against env.get_db_hash()

NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CABINS = ("business", "economy", "basic_economy")
ALL_DATES = tuple(f"2024-05-{day:02d}" for day in range(1, 31))
PAST_DATES = ALL_DATES[:15]  # landed / cancelled / on time / flying / delayed
AVAILABLE_DATES = ALL_DATES[15:]  # 05-16 ... 05-30: every flight is available
UNKNOWN_DATES = ("2024-05-31", "2024-06-01", "2024-04-30", "2024-5-20", "20240520", "")
UNKNOWN_AIRPORTS = ("XXX", "jfk", "JFKX", "", "SF0")
FAKE_USERS = ("nobody_0000", "mia_li_366", "MIA_LI_3668", "", "sara_doe_496 ")
FAKE_RESERVATIONS = ("ZZZZZZ", "HATHAX", "4wq150", "", "NO6JO")
FAKE_FLIGHTS = ("HAT000", "HAT301", "HAT1", "hat001", "XYZ123")
FAKE_PAYMENTS = ("credit_card_0000000", "gift_card_0000000", "certificate_0000000", "paypal_1")
FIRST_NAMES = ("Mia", "Noah", "Aarav", "Chen", "Olivia", "Yusuf", "Sofia", "Liam", "Ivan")
LAST_NAMES = ("Li", "Garcia", "Kim", "Nguyen", "Smith", "Ahmed", "Rossi", "Okafor")
SUMMARIES = ("User wants a refund.", "Customer asks for a human.", "", "Bags + cabin change")


# --- the reference side ------------------------------------------------------------------------
class Reference(ReferenceReplayer):
    """The soak's reference replayer, copying only what each write tool can mutate, with a
    fast whole-DB hash."""

    def __init__(self) -> None:
        super().__init__()
        self._cache: dict[str, tuple[list[str], list[str], dict[str, int]]] | None = None

    def copy_for_write(self, name: str, args: Args) -> None:
        """Copy every record the reference tool ``name`` may mutate before it runs."""
        if name in ("book_reservation", "send_certificate"):
            self._own("users", args.get("user_id"))
        if name == "book_reservation":
            for info in args.get("flights") or ():
                if isinstance(info, dict):
                    self._own("flights", info.get("flight_number"))
        if name in WRITE_TOOLS and "reservation_id" in args:
            rid = args["reservation_id"]
            if isinstance(rid, str) and rid in self.db.reservations:
                self._own("reservations", rid)
                self._own("users", self.db.reservations[rid].user_id)

    def touched(self, table: str) -> set[str]:
        """Keys copied for writing or created since the last reset (tools never delete)."""
        live, pristine = getattr(self.db, table), self.pristine[table]
        if len(live) == len(pristine):
            return set(self.owned[table])
        return self.owned[table] | {key for key in live if key not in pristine}

    def _pieces(self) -> dict[str, tuple[list[str], list[str], dict[str, int]]]:
        """Per table: sorted pristine keys, their ``"key": {...}`` pieces, key -> index."""
        if self._cache is None:
            self._cache = {}
            for table in TABLES:
                keys = sorted(self.pristine[table])
                pieces = [
                    json.dumps(k) + ": " + canonical_json(self.pristine[table][k].model_dump())
                    for k in keys
                ]
                self._cache[table] = (keys, pieces, {k: i for i, k in enumerate(keys)})
        return self._cache

    def fast_hash(self) -> str:
        """``env.get_db_hash()`` assembled from cached per-record pieces (same bytes).

        ``json.dumps(obj, sort_keys=True)`` of the whole DB is the sorted concatenation of its
        records' own sorted-key dumps, so only the records touched since the reset are
        serialised again.
        """
        parts = []
        for table, (keys, pieces, index) in self._pieces().items():
            touched = self.touched(table)
            if touched:
                keys, pieces = list(keys), list(pieces)
                new = []
                for key in touched:
                    piece = f"{json.dumps(key)}: {self.record_json(table, key)}"
                    if key in index:
                        pieces[index[key]] = piece
                    else:
                        new.append((key, piece))
                for key, piece in sorted(new):  # new reservations, in sorted position
                    at = bisect.bisect_left(keys, key)
                    keys.insert(at, key)
                    pieces.insert(at, piece)
            parts.append(f"{json.dumps(table)}: {{{', '.join(pieces)}}}")
        return hashlib.sha256(("{" + ", ".join(parts) + "}").encode()).hexdigest()

    def full_hash(self) -> str:
        return str(self.env.get_db_hash())


@pytest.fixture(scope="module", autouse=True)
def _quiet_reference() -> Iterable[None]:
    """The reference logs whole reservations at debug level on every cancel."""
    _loguru.logger.disable("tau2")
    yield
    _loguru.logger.enable("tau2")


@pytest.fixture(scope="module")
def reference() -> Iterable[Reference]:
    ref = Reference()
    yield ref
    ref.reset()


@pytest.fixture(scope="module")
def pristine() -> PristineDB:
    return load_pristine(REFERENCE_DB_PATH)


# --- comparing ---------------------------------------------------------------------------------
@dataclass
class Mismatch:
    """The first divergence of one sequence, with everything needed to reproduce it."""

    seed: int
    what: str
    calls: list[Call]
    ours: str
    theirs: str

    def __str__(self) -> str:
        name, args = self.calls[-1]
        repro = json.dumps([{"name": n, "arguments": a} for n, a in self.calls])
        return (
            f"seed {self.seed}, call #{len(self.calls)} {name}({json.dumps(args)}): {self.what}\n"
            f"  ours:      {self.ours[:1500]}\n"
            f"  reference: {self.theirs[:1500]}\n"
            f"  reproduce: run_both(json.loads({repro!r}))"
        )


_OUR_GETTERS: dict[str, Callable[[AirlineDB, str], Any]] = {
    "flights": AirlineDB.flight,
    "reservations": AirlineDB.reservation,
    "users": AirlineDB.user,
}


def record_diff(ours: AirlineDB, ref: Reference) -> tuple[str, str, str] | None:
    """(where, ours, theirs) for the first record that serialises differently, else None.

    Both sides share their pristine base, so comparing the records either side touched is
    equivalent to comparing the full DB hashes, and it names the record that differs.
    """
    for table in TABLES:
        for key in sorted(ours.touched(table) | ref.touched(table)):
            record = _OUR_GETTERS[table](ours, key)
            mine = None if record is None else canonical_json(record)
            theirs = ref.record_json(table, key)
            if mine != theirs:
                return f"DB record {table}[{key!r}] differs", str(mine), str(theirs)
    return None


@dataclass
class Runner:
    """Runs calls on both sides of one sequence and records the first mismatch."""

    ref: Reference
    ours: AirlineDB
    seed: int
    rng: random.Random
    calls: list[Call] = field(default_factory=list)
    hash_every_write: bool = True
    mismatch: Mismatch | None = None
    compared: int = 0
    outcomes: list[tuple[str, ToolResult]] = field(default_factory=list)

    def fail(self, what: str, ours: str, theirs: str) -> None:
        self.mismatch = Mismatch(self.seed, what, list(self.calls), ours, theirs)

    def run(self, name: str, args: Args) -> ToolResult | None:
        """Run one call on both sides; None (and ``mismatch`` set) on any divergence."""
        if self.mismatch is not None:
            return None
        self.calls.append((name, copy.deepcopy(args)))
        theirs, their_error = self.ref.call(name, copy.deepcopy(args))
        # Our side gets the OpenAI wire format (a JSON string) part of the time.
        wire: Any = json.dumps(args) if self.rng.random() < 0.3 else copy.deepcopy(args)
        result = execute(self.ours, name, wire)
        self.compared += 1
        self.outcomes.append((name, result))
        if (result.content, result.error) != (theirs, their_error):
            self.fail(
                "tool output differs",
                f"error={result.error} {result.content}",
                f"error={their_error} {theirs}",
            )
            return None
        if name in WRITE_TOOLS:
            diff = record_diff(self.ours, self.ref)
            if diff is not None:
                self.fail(*diff)
                return None
            if not self.hash_every_write:
                return result
            mine, theirs_hash = db_hash(self.ours), self.ref.fast_hash()
            if mine != theirs_hash:
                self.fail("DB hash differs (all records equal: a leak?)", mine, theirs_hash)
                return None
        return result

    def finish(self, check_full_reference_hash: bool) -> None:
        """Re-read every touched record, then compare the whole-DB hashes."""
        for key in sorted(self.ref.touched("users") | self.ours.touched("users")):
            self.run("get_user_details", {"user_id": key})
        for key in sorted(self.ref.touched("reservations") | self.ours.touched("reservations")):
            self.run("get_reservation_details", {"reservation_id": key})
        if self.mismatch is not None:
            return
        mine, theirs = db_hash(self.ours), self.ref.fast_hash()
        if check_full_reference_hash:
            full = self.ref.full_hash()
            assert theirs == full, "harness bug: fast reference hash != env.get_db_hash()"
        if mine != theirs:
            self.fail("final DB hash differs", mine, theirs)


# --- the generator -----------------------------------------------------------------------------
class World:
    """Static indices over the pristine reference DB."""

    def __init__(self, ref: Reference) -> None:
        flights = ref.pristine["flights"]
        self.user_ids = sorted(ref.pristine["users"])
        self.reservation_ids = sorted(ref.pristine["reservations"])
        self.flight_numbers = sorted(flights)
        self.airports = sorted({f.origin for f in flights.values()})
        self.routes: dict[tuple[str, str], list[str]] = {}
        self.departures: dict[str, list[str]] = {}
        for number, flight in flights.items():
            self.routes.setdefault((flight.origin, flight.destination), []).append(number)
            self.departures.setdefault(flight.origin, []).append(number)
        self.route_list = sorted(self.routes)


class Generator:
    """Random well-typed calls that often succeed, drawn from the live reference state."""

    def __init__(self, rng: random.Random, world: World, ref: Reference) -> None:
        self.rng = rng
        self.world = world
        self.ref = ref
        self.focus = rng.choice(world.user_ids)

    # -- small helpers --
    def maybe_float(self, value: int, p: float = 0.1) -> int | float:
        """An integral float (``2.0``) some of the time: valid JSON-schema integers."""
        return float(value) if self.rng.random() < p else value

    def reordered(self, obj: Args) -> Args:
        """The same object with its keys in another order some of the time (LLMs vary it)."""
        if self.rng.random() >= 0.15:
            return obj
        keys = list(obj)
        self.rng.shuffle(keys)
        return {key: obj[key] for key in keys}

    def user_id(self) -> str:
        r = self.rng.random()
        if r < 0.8:
            return self.focus
        if r < 0.9:
            return self.rng.choice(self.world.user_ids)
        return self.rng.choice(FAKE_USERS)

    def reservation_id(self) -> str:
        rng, db = self.rng, self.ref.db
        created = [rid for rid in NEW_RESERVATION_IDS if rid in db.reservations]
        if created and rng.random() < 0.4:
            return rng.choice(created)
        if rng.random() < 0.06:
            return "HATHAT"  # not booked (yet) in this sequence
        r = rng.random()
        user = db.users.get(self.focus)
        if r < 0.6 and user is not None and user.reservations:
            return str(rng.choice(user.reservations))
        if r < 0.9:
            return rng.choice(self.world.reservation_ids)
        return rng.choice(FAKE_RESERVATIONS)

    def date(self, p_available: float = 0.75) -> str:
        r = self.rng.random()
        if r < p_available:
            return self.rng.choice(AVAILABLE_DATES)
        if r < p_available + (1 - p_available) * 0.7:
            return self.rng.choice(PAST_DATES)
        return self.rng.choice(UNKNOWN_DATES)

    def airport(self) -> str:
        if self.rng.random() < 0.9:
            return self.rng.choice(self.world.airports)
        return self.rng.choice(UNKNOWN_AIRPORTS)

    def passengers(self, count: int) -> list[Args]:
        rng = self.rng
        saved = []
        user = self.ref.db.users.get(self.focus)
        if user is not None:
            saved = [p.model_dump() for p in user.saved_passengers]
        out = []
        for i in range(count):
            if i < len(saved) and rng.random() < 0.5:
                out.append(dict(saved[i]))
            else:
                out.append(
                    {
                        "first_name": rng.choice(FIRST_NAMES),
                        "last_name": rng.choice(LAST_NAMES),
                        "dob": f"19{rng.randint(40, 99)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
                    }
                )
        return [self.reordered(p) for p in out]

    def itinerary(self) -> tuple[list[Args], bool]:
        """(flights, round_trip): usually a bookable chain, sometimes with a bad segment."""
        rng, world = self.rng, self.world
        origin, destination = rng.choice(world.route_list)
        day = rng.choice(AVAILABLE_DATES)
        legs = [{"flight_number": rng.choice(world.routes[(origin, destination)]), "date": day}]
        if rng.random() < 0.35:  # a connection from the destination, same day
            nxt = rng.choice(world.departures[destination])
            legs.append({"flight_number": nxt, "date": day})
        round_trip = rng.random() < 0.3
        if round_trip:
            end = self.ref.pristine["flights"][legs[-1]["flight_number"]].destination
            back = world.routes.get((end, origin)) or world.departures[end]
            later = rng.choice([d for d in AVAILABLE_DATES if d >= day])
            legs.append({"flight_number": rng.choice(back), "date": later})
        r = rng.random()
        if r < 0.08:
            rng.choice(legs)["date"] = rng.choice(PAST_DATES)
        elif r < 0.12:
            rng.choice(legs)["date"] = rng.choice(UNKNOWN_DATES)
        elif r < 0.15:
            rng.choice(legs)["flight_number"] = rng.choice(FAKE_FLIGHTS)
        elif r < 0.17:
            legs = []
        elif r < 0.2 and legs:
            legs.append(dict(legs[0]))  # the same flight-date twice
        return [self.reordered(leg) for leg in legs], round_trip

    def price(self, flights: list[Args], cabin: str, count: int) -> int | None:
        """Sum of current prices times passengers, or None if a segment is not bookable."""
        total = 0
        for info in flights:
            flight = self.ref.db.flights.get(info["flight_number"])
            status = None if flight is None else flight.dates.get(info["date"])
            if status is None or status.status != "available":
                return None
            total += status.prices[cabin] * count
        return total

    def payments(self, user_id: str, total: int) -> list[Args]:
        """Entries from the user's methods that add up to ``total`` (usually), perturbed."""
        rng = self.rng
        user = self.ref.db.users.get(user_id)
        methods = list(user.payment_methods.values()) if user is not None else []
        cards = [m for m in methods if m.source == "credit_card"]
        balances = [m for m in methods if m.source != "credit_card"]
        rng.shuffle(balances)
        entries: list[list[Any]] = []
        remaining = total
        r = rng.random()
        certificates = [m for m in balances if m.source == "certificate" and m.amount >= 2]
        if r < 0.07 and certificates:  # the same certificate twice (a partial write in both)
            cert = rng.choice(certificates)
            gifts = [m for m in balances if m.source == "gift_card" and m.amount >= 1]
            if gifts and remaining > 2:
                amount = min(int(gifts[0].amount), remaining - 2)
                entries.append([gifts[0].id, amount])
                remaining -= amount
            first = min(int(cert.amount), max(1, remaining // 2))
            second = min(int(cert.amount), max(0, remaining - first))
            entries += [[cert.id, first], [cert.id, second]]
            remaining -= first + second
            if remaining > 0 and cards:
                entries.append([rng.choice(cards).id, remaining])
        else:
            for method in balances[: rng.randint(0, 2)]:
                if remaining <= 0:
                    break
                amount = min(int(method.amount), remaining)
                entries.append([method.id, amount])
                remaining -= amount
            if remaining > 0 and not cards:  # no credit card: spend the other balances
                for method in balances[len(entries) :]:
                    amount = min(int(method.amount), remaining)
                    if amount > 0:
                        entries.append([method.id, amount])
                        remaining -= amount
            if remaining > 0 or not entries:
                if cards:
                    entries.append([rng.choice(cards).id, remaining])
                elif methods:
                    entries.append([rng.choice(methods).id, remaining])  # may lack balance
                else:
                    entries.append([rng.choice(FAKE_PAYMENTS), remaining])
        r = rng.random()
        if r < 0.1 and entries:
            rng.choice(entries)[1] += rng.choice([-50, -1, 1, 30])  # does not add up
        elif r < 0.13 and entries:
            rng.choice(entries)[0] = rng.choice(FAKE_PAYMENTS)
        elif r < 0.16 and balances:
            over = rng.choice(balances)
            entries.insert(0, [over.id, int(over.amount) + 1])  # over the balance
        elif r < 0.19:
            entries.append([rng.choice(methods).id if methods else "credit_card_0", 0])
        elif r < 0.21:
            entries = []
        elif r < 0.25:  # a gift card listed twice: each entry is checked alone
            split = [e for e in entries if e[0].startswith("gift_card") and e[1] >= 2]
            if split:
                entry = rng.choice(split)
                half = entry[1] // 2
                entry[1] -= half
                entries.append([entry[0], half])
        if rng.random() < 0.15:
            rng.shuffle(entries)
        return [
            self.reordered({"payment_id": pid, "amount": self.maybe_float(amt)})
            for pid, amt in entries
        ]

    def update_payment(self, owner_id: str | None) -> str:
        rng = self.rng
        user = self.ref.db.users.get(owner_id) if owner_id else None
        methods = list(user.payment_methods.values()) if user is not None else []
        r = rng.random()
        for source, upto in (("credit_card", 0.45), ("gift_card", 0.75), ("certificate", 0.85)):
            if r < upto:
                pool = [m.id for m in methods if m.source == source]
                if pool:
                    return str(rng.choice(pool))
        if r < 0.92 and methods:
            return str(rng.choice(methods).id)
        other = self.ref.db.users[rng.choice(self.world.user_ids)]
        if r < 0.96 and other.payment_methods:  # someone else's method
            return str(rng.choice(list(other.payment_methods)))
        return rng.choice(FAKE_PAYMENTS)

    # -- one generator per tool --
    def book_reservation(self) -> Args:
        rng = self.rng
        user_id = self.focus if rng.random() < 0.88 else self.user_id()
        flights, round_trip = self.itinerary()
        cabin = rng.choice(CABINS)
        count = rng.choice((1, 1, 1, 2, 2, 3, 4, 0)) if rng.random() < 0.97 else 21
        insurance = rng.choice(("yes", "no"))
        nonfree = rng.choice((0, 0, 1, 2, 3))
        total_bags = nonfree + rng.choice((0, 1, 2))
        price = self.price(flights, cabin, count)
        total = (price if price is not None else rng.randint(100, 900)) + 50 * nonfree
        total += 30 * count if insurance == "yes" else 0
        pristine = self.ref.pristine["flights"]
        first = pristine.get(flights[0]["flight_number"]) if flights else None
        last = pristine.get(flights[-1]["flight_number"]) if flights else None
        return {
            "user_id": user_id,
            "origin": first.origin if first is not None else self.airport(),
            "destination": last.destination if last is not None else self.airport(),
            "flight_type": ("round_trip" if round_trip else "one_way")
            if rng.random() < 0.9
            else rng.choice(("round_trip", "one_way")),
            "cabin": cabin,
            "flights": flights,
            "passengers": self.passengers(count),
            "payment_methods": self.payments(user_id, total),
            "total_baggages": self.maybe_float(total_bags),
            "nonfree_baggages": self.maybe_float(nonfree, 0.25),
            "insurance": insurance,
        }

    def cancel_reservation(self) -> Args:
        return {"reservation_id": self.reservation_id()}

    def update_reservation_flights(self) -> Args:
        rng, world = self.rng, self.world
        rid = self.reservation_id()
        reservation = self.ref.db.reservations.get(rid)
        if reservation is None:
            flights, _ = self.itinerary()
            return {
                "reservation_id": rid,
                "cabin": rng.choice(CABINS),
                "flights": flights,
                "payment_id": self.update_payment(self.focus),
            }
        cabin = reservation.cabin if rng.random() < 0.65 else rng.choice(CABINS)
        flights = [{"flight_number": s.flight_number, "date": s.date} for s in reservation.flights]
        r = rng.random()
        if flights and r < 0.35:  # another flight on the same route
            i = rng.randrange(len(flights))
            seg = reservation.flights[i]
            alternatives = world.routes.get((seg.origin, seg.destination), [seg.flight_number])
            flights[i] = {"flight_number": rng.choice(alternatives), "date": self.date(0.85)}
        elif flights and r < 0.5:  # same flight, another date
            rng.choice(flights)["date"] = self.date(0.85)
        elif len(flights) > 1 and r < 0.6:
            flights.pop(rng.randrange(len(flights)))
        elif r < 0.7:
            flights, _ = self.itinerary()
        elif r < 0.73:
            flights.append({"flight_number": rng.choice(FAKE_FLIGHTS), "date": self.date()})
        if rng.random() < 0.1:
            flights.reverse()
        return {
            "reservation_id": rid,
            "cabin": cabin,
            "flights": flights,
            "payment_id": self.update_payment(reservation.user_id),
        }

    def update_reservation_baggages(self) -> Args:
        rng = self.rng
        rid = self.reservation_id()
        reservation = self.ref.db.reservations.get(rid)
        nonfree = int(reservation.nonfree_baggages) if reservation is not None else 1
        nonfree = max(0, nonfree + rng.choice((-2, -1, 0, 1, 1, 2, 3)))
        total = nonfree + rng.choice((0, 1, 2)) if rng.random() < 0.95 else max(0, nonfree - 1)
        if rng.random() < 0.03:  # negative counts are well-typed integers too
            nonfree, total = rng.choice(((-1, 0), (0, -1), (-1, -1)))
        owner = reservation.user_id if reservation is not None else self.focus
        return {
            "reservation_id": rid,
            "total_baggages": self.maybe_float(total, 0.15),
            "nonfree_baggages": self.maybe_float(nonfree, 0.15),
            "payment_id": self.update_payment(owner),
        }

    def update_reservation_passengers(self) -> Args:
        rng = self.rng
        rid = self.reservation_id()
        reservation = self.ref.db.reservations.get(rid)
        count = len(reservation.passengers) if reservation is not None else rng.randint(1, 3)
        if rng.random() < 0.15:
            count = max(0, count + rng.choice((-1, 1)))
        return {"reservation_id": rid, "passengers": self.passengers(count)}

    def send_certificate(self) -> Args:
        amount = self.rng.choice((50, 100, 150, 250, 400, 0, 1000, 75))
        return {"user_id": self.user_id(), "amount": self.maybe_float(amount, 0.2)}

    def get_user_details(self) -> Args:
        return {"user_id": self.user_id()}

    def get_reservation_details(self) -> Args:
        return {"reservation_id": self.reservation_id()}

    def booked_segment(self) -> Any | None:
        """A segment of a reservation booked in this sequence (its seats changed), if any."""
        reservations = self.ref.db.reservations
        booked = [reservations[rid] for rid in NEW_RESERVATION_IDS if rid in reservations]
        segments = [segment for reservation in booked for segment in reservation.flights]
        return self.rng.choice(segments) if segments else None

    def search_direct_flight(self) -> Args:
        rng = self.rng
        segment = self.booked_segment() if rng.random() < 0.3 else None
        if segment is not None:
            return {
                "origin": segment.origin,
                "destination": segment.destination,
                "date": segment.date,
            }
        if rng.random() < 0.65:
            origin, destination = rng.choice(self.world.route_list)
        else:
            origin, destination = self.airport(), self.airport()
        return {"origin": origin, "destination": destination, "date": self.date()}

    def search_onestop_flight(self) -> Args:
        segment = self.booked_segment() if self.rng.random() < 0.3 else None
        if segment is not None:
            return {"origin": segment.origin, "destination": self.airport(), "date": segment.date}
        date = "2024-05-30" if self.rng.random() < 0.1 else self.date(0.8)
        return {"origin": self.airport(), "destination": self.airport(), "date": date}

    def list_all_airports(self) -> Args:
        return {}

    def get_flight_status(self) -> Args:
        rng = self.rng
        segment = self.booked_segment() if rng.random() < 0.2 else None
        if segment is not None:
            return {"flight_number": segment.flight_number, "date": segment.date}
        number = rng.choice(self.world.flight_numbers)
        if rng.random() < 0.08:
            number = rng.choice(FAKE_FLIGHTS)
        date = rng.choice(ALL_DATES) if rng.random() < 0.85 else rng.choice(UNKNOWN_DATES)
        return {"flight_number": number, "date": date}

    def expression(self, depth: int = 3) -> str:
        rng = self.rng
        if depth == 0 or rng.random() < 0.3:
            r = rng.random()
            if r < 0.6:
                return str(rng.randint(0, 2000))
            if r < 0.9:
                return f"{rng.randint(0, 500)}.{rng.randint(0, 99)}"
            return rng.choice(("0.1", "2.675", "99999999999999999999", "0", "1.005"))
        left, right = self.expression(depth - 1), self.expression(depth - 1)
        op = rng.choice(("+", "-", "*", "/", "+", "*", "//", "**"))
        if op == "**":
            right = str(rng.randint(0, 3))
            left = f"({left})"
        text = f"{left} {op} {right}" if rng.random() < 0.6 else f"{left}{op}{right}"
        r = rng.random()
        if r < 0.25:
            return f"({text})"
        if r < 0.3:
            return f"-({text})"
        return text

    def calculate(self) -> Args:
        r = self.rng.random()
        if r < 0.08:
            expression = self.rng.choice(("2 x 3", "abs(2)", "7 % 2", "1e3", "$100", "2,000 + 1"))
        elif r < 0.14:
            expression = f"{self.expression(1)} / {self.rng.choice(('0', '0.0', '(1 - 1)'))}"
        else:
            expression = self.expression()
        return {"expression": expression}

    def transfer_to_human_agents(self) -> Args:
        return {"summary": self.rng.choice(SUMMARIES)}


WEIGHTS: dict[str, int] = {
    "book_reservation": 13,
    "cancel_reservation": 6,
    "update_reservation_flights": 9,
    "update_reservation_baggages": 7,
    "update_reservation_passengers": 5,
    "send_certificate": 5,
    "get_user_details": 7,
    "get_reservation_details": 7,
    "search_direct_flight": 6,
    "search_onestop_flight": 3,
    "list_all_airports": 2,
    "get_flight_status": 6,
    "calculate": 7,
    "transfer_to_human_agents": 2,
}


def run_sequence(ref: Reference, world: World, base: PristineDB, seed: int) -> Runner:
    """One random sequence from the pristine DB on both sides."""
    ref.reset()
    rng = random.Random(seed)
    gen = Generator(rng, world, ref)
    runner = Runner(
        ref,
        base.fork(),
        seed,
        random.Random(seed + 1_000_003),
        hash_every_write=seed % FULL_HASH_EVERY == 0,
    )
    names, weights = list(WEIGHTS), list(WEIGHTS.values())
    for _ in range(rng.randint(8, 22)):
        name = rng.choices(names, weights)[0]
        if rng.random() < 0.06:  # a burst: cancel twice, or until "Too many ..."
            name = rng.choice(("cancel_reservation", "send_certificate", "book_reservation"))
            if name == "book_reservation":
                for _ in range(4):
                    runner.run(name, gen.book_reservation())
                continue
            args = getattr(gen, name)()
            for _ in range(2 if name == "cancel_reservation" else 4):
                runner.run(name, copy.deepcopy(args))
            continue
        runner.run(name, getattr(gen, name)())
        if runner.mismatch is not None:
            break
    runner.finish(check_full_reference_hash=seed % FULL_REFERENCE_HASH_EVERY == 0)
    return runner


def run_both(calls: Iterable[Args], ref: Reference | None = None) -> Runner:
    """Replay ``[{"name": ..., "arguments": ...}, ...]`` on fresh DBs on both sides (repro aid)."""
    ref = ref or Reference()
    ref.reset()
    runner = Runner(ref, load_pristine(REFERENCE_DB_PATH).fork(), -1, random.Random(0))
    for call in calls:
        runner.run(call["name"], call["arguments"])
    return runner


def assert_pristine_intact(base: PristineDB, ref: Reference | None = None) -> None:
    """No write leaked into the shared pristine base (checked without cached fragments).

    With ``ref``, also check that the harness's copy-on-write kept the reference's pristine
    objects intact, i.e. that every sequence really started from the reference DB.
    """
    assert db_hash(load_pristine(REFERENCE_DB_PATH)) == PRISTINE_DB_HASH
    whole = canonical_json({t: base.table(t) for t in TABLES})
    assert hashlib.sha256(whole.encode()).hexdigest() == PRISTINE_DB_HASH
    if ref is not None:
        ref.reset()
        assert ref.full_hash() == PRISTINE_DB_HASH, "harness bug: reference pristine DB mutated"


# --- tests -------------------------------------------------------------------------------------
_STATS: dict[str, float] = {"calls": 0, "sequences": 0, "seconds": 0.0}


#: Chunks in the default run; the rest are marked ``long`` (CI runs them all).
DEFAULT_CHUNKS = 1


@pytest.mark.parametrize(
    "chunk",
    [
        pytest.param(c, marks=() if c < DEFAULT_CHUNKS else pytest.mark.long)
        for c in range(NUM_CHUNKS)
    ],
)
def test_random_sequences_match_reference(
    chunk: int, reference: Reference, pristine: PristineDB
) -> None:
    world = World(reference)
    per_chunk = -(-NUM_SEQUENCES // NUM_CHUNKS)
    seeds = range(
        FIRST_SEED + chunk * per_chunk,
        FIRST_SEED + min(NUM_SEQUENCES, (chunk + 1) * per_chunk),
    )
    started = time.perf_counter()
    mismatches = []
    for seed in seeds:
        runner = run_sequence(reference, world, pristine, seed)
        _STATS["calls"] += runner.compared
        _STATS["sequences"] += 1
        if runner.mismatch is not None:
            mismatches.append(runner.mismatch)
    _STATS["seconds"] += time.perf_counter() - started
    print(
        f"chunk {chunk}: {len(seeds)} sequences; so far {_STATS['sequences']:.0f} sequences, "
        f"{_STATS['calls']:.0f} calls compared in {_STATS['seconds']:.1f} s"
    )
    assert_pristine_intact(pristine, reference)
    assert not mismatches, f"{len(mismatches)} sequence(s) diverged:\n" + "\n\n".join(
        map(str, mismatches[:5])
    )


EXPECTED_ERRORS: tuple[str, ...] = (
    r"^Error: User .* not found$",
    r"^Error: Reservation .* not found$",
    r"^Error: Flight \S* not found$",
    r"^Error: Flight \S* not found on date ",
    r"^Error: Flight \S* not available on date ",
    r"^Error: Not enough seats on flight ",
    r"^Error: Payment method \S+ not found$",
    r"^Error: Not enough balance in payment method ",
    r"^Error: Payment amount does not add up, total price is \d+, but paid ",
    r"^Error: Payment amount does not add up, total price is \d+\.0, but paid ",
    r"^Error: 'certificate_\d+'$",  # the same certificate twice in one booking
    r"^Error: Too many reservations$",
    r"^Error: Too many certificates$",
    r"^Error: Payment method not found$",
    r"^Error: Certificate cannot be used to update reservation$",
    r"^Error: Gift card balance is not enough$",
    r"^Error: Number of passengers does not match$",
    r"^Error: Invalid characters in expression$",
    r"^Error: (float )?(floor )?division by zero$",
)


def test_generator_covers_every_tool_and_outcome(
    reference: Reference, pristine: PristineDB
) -> None:
    """The sequences reach every tool and every error path, and integral floats succeed."""
    world = World(reference)
    outcomes: dict[str, set[bool]] = {name: set() for name in TOOLS}
    errors: set[str] = set()
    float_successes: set[str] = set()
    for seed in range(FIRST_SEED, FIRST_SEED + 40):
        runner = run_sequence(reference, world, pristine, seed)
        assert runner.mismatch is None, str(runner.mismatch)
        for (name, args), (_, result) in zip(runner.calls, runner.outcomes, strict=True):
            outcomes[name].add(result.error)
            if result.error:
                errors.add(result.content)
            elif any(isinstance(v, float) for v in _leaves(args)):
                float_successes.add(name)
    assert all(False in seen for seen in outcomes.values()), outcomes
    assert all(True in outcomes[name] for name in WRITE_TOOLS), outcomes
    for pattern in EXPECTED_ERRORS:
        assert any(re.search(pattern, text) for text in errors), f"never produced: {pattern}"
    assert {"book_reservation", "update_reservation_baggages", "send_certificate"} <= (
        float_successes
    )


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def test_worked_example_book_then_cancel(pristine: PristineDB) -> None:
    """Spec §11: book HATHAT for mia_li_3668 with a certificate and a card, then cancel it."""
    env = get_environment()  # a truly fresh reference env, compared with the real hash
    ours = pristine.fork()
    booking = _mia_booking(
        payment_methods=[
            {"payment_id": "certificate_4856383", "amount": 100},
            {"payment_id": "credit_card_4421486", "amount": 121},
        ],
        total_baggages=1,
        nonfree_baggages=1,
        insurance="yes",
    )
    assert db_hash(ours) == env.get_db_hash() == PRISTINE_DB_HASH
    seats = ours.flight("HAT057")["dates"]["2024-05-20"]["available_seats"]  # type: ignore[index]
    assert seats["economy"] == 3
    outputs = []
    for i, (name, args) in enumerate(
        [
            ("book_reservation", booking),
            ("cancel_reservation", {"reservation_id": "HATHAT"}),
            ("get_user_details", {"user_id": "mia_li_3668"}),
            ("get_flight_status", {"flight_number": "HAT057", "date": "2024-05-20"}),
        ]
    ):
        theirs = env.get_response(
            ToolCall(id=f"w{i}", name=name, arguments=copy.deepcopy(args), requestor="assistant")
        )
        mine = execute(ours, name, copy.deepcopy(args))
        assert (mine.content, mine.error) == (theirs.content, theirs.error), name
        assert db_hash(ours) == env.get_db_hash(), f"DB hash differs after {name}"
        outputs.append(json.loads(mine.content) if mine.content.startswith("{") else mine.content)
    booked, cancelled, user, _ = outputs
    assert booked["reservation_id"] == "HATHAT"
    assert booked["created_at"] == "2024-05-15T15:00:00"
    assert booked["flights"][0]["price"] == 141
    assert booked["status"] is None
    assert cancelled["status"] == "cancelled"
    assert cancelled["payment_history"] == [
        {"payment_id": "certificate_4856383", "amount": 100},
        {"payment_id": "credit_card_4421486", "amount": 121},
        {"payment_id": "certificate_4856383", "amount": -100},
        {"payment_id": "credit_card_4421486", "amount": -121},
    ]
    assert "certificate_4856383" not in user["payment_methods"]  # not restored
    assert user["reservations"][-1] == "HATHAT"
    seats = ours.flight("HAT057")["dates"]["2024-05-20"]["available_seats"]  # type: ignore[index]
    assert seats["economy"] == 2  # not released by the cancel
    assert db_hash(ours) != PRISTINE_DB_HASH
    assert_pristine_intact(pristine)


CALCULATE_EDGE_CASES: tuple[str, ...] = (
    "2 + 2",
    "10 / 3",
    "2**3",
    "0.1+0.2",
    "2.675*1",
    "10000000000000000",
    "99999999999999999999 * 99999999999999999999",
    "1/0",
    "1.0/0",
    "7 // 2",
    "7 // 0",
    "7.5 // 0",
    "2 ** -1",
    "0 ** -1",
    "(-8) ** 0.5",
    "10 ** 400",
    "10.0 ** 400",
    "-3 * -(2 + 1)",
    "--5",
    "+5",
    "5.",
    ".5",
    "((1))",
    "  3  ",
    "-0.0",
    "1/3*3",
    "2 x 3",
    "1e3",
    "7 % 2",
)


@pytest.mark.parametrize("expression", CALCULATE_EDGE_CASES)
def test_calculate_edge_cases_match_reference(expression: str, reference: Reference) -> None:
    """Well-formed arithmetic (no syntax errors) gives the reference's exact text."""
    reference.reset()
    theirs = reference.call("calculate", {"expression": expression})
    mine = execute(_fresh_view(), "calculate", {"expression": expression})
    assert (mine.content, mine.error) == theirs


def _fresh_view() -> AirlineDB:
    """A fresh view; ``calculate`` never reads it."""
    return load_pristine(REFERENCE_DB_PATH).fork()


def _mia_booking(**changes: Any) -> Args:
    """A bookable one-seat economy trip for mia_li_3668 paid by card (141 dollars)."""
    card = [{"payment_id": "credit_card_4421486", "amount": 141}]
    no_extras = {"total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}
    return sample_booking(**{"payment_methods": card, **no_extras, **changes})


HUGE_INTEGRAL_FLOATS: dict[str, Call] = {
    "book total_baggages=1e19": ("book_reservation", _mia_booking(total_baggages=1e19)),
    "book total_baggages=2.0**63": ("book_reservation", _mia_booking(total_baggages=2.0**63)),
    "bags nonfree=1e19": (
        "update_reservation_baggages",
        {
            "reservation_id": "NO6JO3",
            "total_baggages": 1,
            "nonfree_baggages": 1e19,
            "payment_id": "credit_card_1955700",
        },
    ),
    "bags nonfree=2.0**62 (fee 50x >= 2**63)": (
        "update_reservation_baggages",
        {
            "reservation_id": "NO6JO3",
            "total_baggages": 1,
            "nonfree_baggages": 2.0**62,
            "payment_id": "credit_card_1955700",
        },
    ),
}


@pytest.mark.parametrize("case", list(HUGE_INTEGRAL_FLOATS))
def test_huge_integral_floats_have_the_reference_db_effect(
    case: str, reference: Reference, pristine: PristineDB
) -> None:
    """OPEN BUG: integral floats at or beyond 2**63 (directly, or as the 50-dollar bag fee).

    JSON Schema counts ``1e19`` as an integer, and our validation accepts it, but the
    reference's pydantic models refuse to make an int of a float outside the int64 range
    (``int_parsing_size``): ``Reservation(total_baggages=...)`` when booking and
    ``Payment(amount=fee)`` when adding bags. So the reference call fails and leaves the DB
    alone, while ours succeeds and writes. The reference's text is pydantic's (not reproduced,
    spec §13.5); the error flag and the DB must match. Fix in validation (refuse such floats
    with our own message) plus a check of the bag fee, or document it in DEVIATIONS.md.
    """
    name, args = HUGE_INTEGRAL_FLOATS[case]
    reference.reset()
    ours = pristine.fork()
    theirs, their_error = reference.call(name, copy.deepcopy(args))
    assert their_error and "int_parsing_size" in theirs, "precondition: the reference refuses"
    mine = execute(ours, name, copy.deepcopy(args))
    assert mine.error, f"ours accepted what the reference refuses: {mine.content[:300]}"
    assert db_hash(ours) == reference.fast_hash() == PRISTINE_DB_HASH


def test_pristine_db_unchanged_after_sequences(reference: Reference, pristine: PristineDB) -> None:
    """After all the sequences above (and a write-heavy one here) the shared base is intact."""
    world = World(reference)
    for seed in (FIRST_SEED + 7, FIRST_SEED + 11):
        assert run_sequence(reference, world, pristine, seed).mismatch is None
    assert_pristine_intact(pristine, reference)
    assert reference.fast_hash() == PRISTINE_DB_HASH
