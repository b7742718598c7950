"""Which users and reservations the benchmarks name, so generated tasks can leave them out.

A benchmark task "names" an entity when its id appears anywhere in the task record: the
customer's instructions and known info, the gold actions' arguments, the assertions. Both task
sets count: tau2's (in the reference's wheel, the data every command uses) and tau3's. tau3's
task file is in no wheel, so the ids it names ship with this package (``tau3_named_ids.json``:
ids only, with the tau3 commit and the sha256 of the file they were read from) and generating
tasks needs nothing but the package index; whenever the tau3 file is at hand
(``$AIRLINE_GYM_TAU3_DIR`` or the cache, never fetched for this) its ids are read again and must
be the shipped ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.errors import DataError

__all__ = ["TAU3_NAMED_IDS", "benchmark_entities", "named_entities", "tau3_named"]

#: The shipped ids of tau3's airline tasks (see the module docstring).
TAU3_NAMED_IDS = Path(__file__).with_name("tau3_named_ids.json")

_TOKEN = re.compile(r"[A-Za-z0-9_]+")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def named_entities(records: Iterable[Any], db: PristineDB) -> tuple[frozenset[str], frozenset[str]]:
    """The user ids and reservation ids of ``db`` that some task record mentions."""
    users: set[str] = set()
    reservations: set[str] = set()
    for record in records:
        for text in _strings(record):
            for token in _TOKEN.findall(text):
                if token in db.users:
                    users.add(token)
                elif token in db.reservations:
                    reservations.add(token)
    return frozenset(users), frozenset(reservations)


def tau3_named(db: PristineDB) -> tuple[frozenset[str], frozenset[str]]:
    """The users and reservations tau3's airline tasks name: the shipped list, checked against
    the tau3 task file when it is at hand (:class:`DataError` when they differ)."""
    from airline_gym.data.tau3 import TAU3_COMMIT, TAU3_FILES, tau3_at_hand

    shipped = json.loads(TAU3_NAMED_IDS.read_text(encoding="utf-8"))
    path, sha256 = TAU3_FILES["tasks.json"]
    if (shipped["tau3_commit"], shipped["file"], shipped["sha256"]) != (TAU3_COMMIT, path, sha256):
        raise DataError(
            f"{TAU3_NAMED_IDS} lists the ids of {shipped['file']} at tau3 commit "
            f"{shipped['tau3_commit'][:7]} (sha256 {shipped['sha256'][:12]}...), not of the pinned "
            f"{path} at {TAU3_COMMIT[:7]} (sha256 {sha256[:12]}...): reinstall airline-gym"
        )
    named = frozenset(shipped["users"]), frozenset(shipped["reservations"])
    files = tau3_at_hand()
    if files is not None:
        with open(files.tasks, encoding="utf-8") as f:
            found = named_entities(json.load(f), db)
        if found != named:
            raise DataError(
                f"the tau3 tasks in {files.tasks} name {len(found[0])} users and "
                f"{len(found[1])} reservations, the list shipped in {TAU3_NAMED_IDS} "
                f"{len(named[0])} and {len(named[1])}: reinstall airline-gym"
            )
    return named


def benchmark_entities(db: PristineDB) -> tuple[frozenset[str], frozenset[str]]:
    """Users and reservations named by any tau2 or tau3 airline task (tau3's: :func:`tau3_named`,
    nothing downloaded)."""
    from airline_gym.data import data_files

    with open(data_files().tasks, encoding="utf-8") as f:
        users, reservations = named_entities(json.load(f), db)
    tau3_users, tau3_reservations = tau3_named(db)
    return users | tau3_users, reservations | tau3_reservations
