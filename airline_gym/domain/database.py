"""The airline database: one pristine copy per process, a cheap copy-on-write view per episode.

``PristineDB`` holds db.json parsed and normalised once. ``AirlineDB`` is an episode's view of
it: reads fall through to the pristine records, and the first write to a record copies just that
record into the view. A fresh view costs three empty dicts, episodes never see each other's
writes, and the pristine data is never mutated.

Because every view shares the pristine base, two views are equal (their reference DB hashes
match) exactly when the records either of them touched serialise identically; grading uses
that instead of hashing 7 MB.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from airline_gym.data.limits import DB_MAX_BYTES, read_limited
from airline_gym.domain import records
from airline_gym.domain.records import Record
from airline_gym.errors import ConfigError

log = logging.getLogger(__name__)

TABLES: tuple[str, ...] = ("flights", "reservations", "users")
PRISTINE_DB_HASH = "124e39a664b56402bcd09cb8a6a9cece6acb8462337c969799d5658e3250f263"


def canonical_json(value: Any) -> str:
    """The reference hash's serialisation of one value (sorted keys, default separators)."""
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(eq=False)
class PristineDB:
    """db.json, parsed and normalised once; never mutated after loading."""

    flights: dict[str, Record]
    users: dict[str, Record]
    reservations: dict[str, Record]
    path: str = ""
    flights_by_origin: dict[str, list[str]] = field(default_factory=dict)
    _fragments: dict[str, dict[str, str]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        for number, flight in self.flights.items():
            self.flights_by_origin.setdefault(flight["origin"], []).append(number)

    @classmethod
    def from_json(cls, raw: dict[str, Any], path: str = "") -> PristineDB:
        """Build from the parsed db.json object."""
        return cls(
            flights={k: records.flight(v) for k, v in raw["flights"].items()},
            users={k: records.user(v) for k, v in raw["users"].items()},
            reservations={k: records.reservation(v) for k, v in raw["reservations"].items()},
            path=path,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as a reference to the file: another process parses it once itself."""
        if not self.path:
            raise TypeError("a PristineDB built without a path cannot be pickled")
        return (load_pristine, (self.path,))

    def table(self, name: str) -> dict[str, Record]:
        """One of ``flights``, ``reservations``, ``users``."""
        return getattr(self, name)  # type: ignore[no-any-return]

    def fragments(self) -> dict[str, dict[str, str]]:
        """Canonical JSON of every pristine record, computed once (for full hashes)."""
        with self._lock:
            if self._fragments is None:
                self._fragments = {
                    name: {k: canonical_json(v) for k, v in self.table(name).items()}
                    for name in TABLES
                }
            return self._fragments

    def fork(self) -> AirlineDB:
        """A fresh episode view of this database."""
        return AirlineDB(self)


@cache
def _load_pristine(path: str, mtime_ns: int) -> PristineDB:
    start = time.perf_counter()
    data = read_limited(path, DB_MAX_BYTES, "airline database")
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as exc:  # truncated, empty, not UTF-8, too deep
        raise ConfigError(f"{path}: not an airline DB: not valid JSON ({exc})") from None
    try:
        db = PristineDB.from_json(raw, path=path)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ConfigError(f"{path}: not an airline DB: {_first_bad_record(raw, exc)}") from None
    log.debug("loaded the pristine DB from %s in %.2f s", path, time.perf_counter() - start)
    return db


_RECORD_OF = {"flights": records.flight, "users": records.user, "reservations": records.reservation}


def _first_bad_record(raw: Any, exc: Exception) -> str:
    """What is wrong with a parsed db.json that :meth:`PristineDB.from_json` refused."""
    if not isinstance(raw, dict):
        return f"expected an object with {', '.join(TABLES)}, got {type(raw).__name__}"
    for table, convert in _RECORD_OF.items():
        if not isinstance(raw.get(table), dict):
            return f"'{table}' must be an object of records, not {type(raw.get(table)).__name__}"
        for key, record in raw[table].items():
            try:
                convert(record)
            except (KeyError, TypeError, AttributeError, ValueError) as problem:
                return f"{table}[{key!r}]: {type(problem).__name__}: {problem}"
    return f"{type(exc).__name__}: {exc}"


def load_pristine(path: str | os.PathLike[str] | None = None) -> PristineDB:
    """The pristine DB at ``path`` (default: the configured data files), parsed once."""
    if path is None:
        from airline_gym.data import data_files

        path = data_files().db
    resolved = str(Path(path).resolve())
    return _load_pristine(resolved, os.stat(resolved).st_mtime_ns)


class AirlineDB:
    """An episode's copy-on-write view of a :class:`PristineDB`.

    Read accessors return records that must not be mutated; ``*_for_write`` accessors return the
    view's private copy, made on first use.
    """

    __slots__ = ("_changed", "base")

    def __init__(self, base: PristineDB) -> None:
        self.base = base
        self._changed: dict[str, dict[str, Record]] = {name: {} for name in TABLES}

    # --- reads -------------------------------------------------------------------------------
    def _get(self, table: str, key: str) -> Record | None:
        changed = self._changed[table]
        if key in changed:
            return changed[key]
        return self.base.table(table).get(key)

    def flight(self, number: str) -> Record | None:
        """The flight record, or ``None``."""
        return self._get("flights", number)

    def user(self, user_id: str) -> Record | None:
        """The user record, or ``None``."""
        return self._get("users", user_id)

    def reservation(self, reservation_id: str) -> Record | None:
        """The reservation record, or ``None``."""
        return self._get("reservations", reservation_id)

    def has_reservation(self, reservation_id: str) -> bool:
        """Whether a reservation with this id exists (cancelled ones included)."""
        return (
            reservation_id in self._changed["reservations"]
            or reservation_id in self.base.reservations
        )

    def flights_from(self, origin: str | None) -> Iterator[Record]:
        """Flights in DB order, optionally only those departing ``origin``."""
        numbers = (
            self.base.flights if origin is None else self.base.flights_by_origin.get(origin, ())
        )
        for number in numbers:
            record = self.flight(number)
            if record is not None:
                yield record

    # --- writes ------------------------------------------------------------------------------
    def _for_write(self, table: str, key: str) -> Record | None:
        changed = self._changed[table]
        if key in changed:
            return changed[key]
        original = self.base.table(table).get(key)
        if original is None:
            return None
        private = clone(original)
        changed[key] = private
        return private  # type: ignore[no-any-return]

    def seats_for_write(self, number: str, date: str) -> dict[str, int]:
        """The private, writable ``available_seats`` of one flight-date.

        Only that flight-date is copied; the flight's other 29 dates stay shared with the
        pristine DB (nothing else ever writes to a flight).
        """
        changed = self._changed["flights"]
        flight = changed.get(number)
        if flight is None:
            flight = dict(self.base.flights[number])
            flight["dates"] = dict(flight["dates"])
            changed[number] = flight
        status = flight["dates"][date]
        if status is self.base.flights[number]["dates"][date]:
            status = clone(status)
            flight["dates"][date] = status
        return status["available_seats"]  # type: ignore[no-any-return]

    def user_for_write(self, user_id: str) -> Record | None:
        """This view's private copy of a user."""
        return self._for_write("users", user_id)

    def reservation_for_write(self, reservation_id: str) -> Record | None:
        """This view's private copy of a reservation."""
        return self._for_write("reservations", reservation_id)

    def add_reservation(self, reservation: Record) -> None:
        """Store a new reservation."""
        self._changed["reservations"][reservation["reservation_id"]] = reservation

    # --- whole-DB views ----------------------------------------------------------------------
    def touched(self, table: str) -> set[str]:
        """Keys of records this view wrote to (or created) in ``table``."""
        return set(self._changed[table])

    def copy(self) -> AirlineDB:
        """An independent view with the same contents (cheap: copies only touched records)."""
        other = AirlineDB(self.base)
        other._changed = {name: clone(recs) for name, recs in self._changed.items()}
        return other

    def to_dict(self) -> dict[str, dict[str, Record]]:
        """The whole database as plain dicts (a deep copy)."""
        out: dict[str, dict[str, Record]] = {}
        for name in TABLES:
            merged = dict(self.base.table(name))
            merged.update(self._changed[name])
            out[name] = clone(merged)
        return out

    def hash(self) -> str:
        """The reference's DB hash: sha256 of the sorted-key JSON of the whole DB."""
        fragments = self.base.fragments()
        digest = hashlib.sha256()
        digest.update(b"{")
        for t, name in enumerate(TABLES):
            changed = self._changed[name]
            keys = sorted(set(self.base.table(name)) | set(changed))
            prefix = (", " if t else "") + json.dumps(name) + ": {"
            digest.update(prefix.encode())
            parts = []
            for key in keys:
                frag = canonical_json(changed[key]) if key in changed else fragments[name][key]
                parts.append(json.dumps(key) + ": " + frag)
            digest.update(", ".join(parts).encode())
            digest.update(b"}")
        digest.update(b"}")
        return digest.hexdigest()


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values serialise identically (so ``3 != 3.0``, ``1 != True`` and
    ``-0.0 != 0.0``).

    Equivalent to comparing :func:`canonical_json` of both, but stops at shared sub-objects
    (views share untouched records and flight-dates with the pristine DB) and at the first
    difference.
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):  # the JSON text decides: NaN == NaN, -0.0 != 0.0
        return (a != a and b != b) or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    return bool(a == b)


def clone(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars); much faster than deepcopy."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def db_hash(db: AirlineDB | PristineDB) -> str:
    """The reference's DB hash of a view or of the pristine DB."""
    return (db.fork() if isinstance(db, PristineDB) else db).hash()


def changed_records(
    a: AirlineDB, b: AirlineDB
) -> Iterator[tuple[str, str, Record | None, Record | None]]:
    """(table, key, record in a, record in b) for every record that differs between two views.

    Equivalent to comparing the full-DB hashes: both views share the pristine base, so only
    records one of them touched can differ, and canonical JSON keeps int vs float, list order
    and nulls significant.
    """
    if a.base is not b.base:
        raise ValueError("views of different pristine databases cannot be compared")
    for name in TABLES:
        for key in sorted(a.touched(name) | b.touched(name)):
            ra, rb = a._get(name, key), b._get(name, key)
            if not same_json(ra, rb):
                yield name, key, ra, rb


def same_db(a: AirlineDB, b: AirlineDB) -> bool:
    """Whether two views have equal reference DB hashes, without hashing 7 MB."""
    return next(changed_records(a, b), None) is None
