"""Which users and reservations the benchmarks name, so generated tasks can leave them out.

A benchmark task "names" an entity when its id appears anywhere in the task record: the
customer's instructions and known info, the gold actions' arguments, the assertions. Both task
sets count: tau2's (shipped with the reference package) and tau3's (fetched on first use).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from airline_gym.domain.database import PristineDB

__all__ = ["benchmark_entities", "named_entities"]

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


def benchmark_entities(db: PristineDB) -> tuple[frozenset[str], frozenset[str]]:
    """Users and reservations named by any tau2 or tau3 airline task (tau3's file is fetched on
    first use; offline, ``$AIRLINE_GYM_TAU3_DIR``)."""
    import json

    from airline_gym.data import data_files
    from airline_gym.data.tau3 import tau3_files

    users: set[str] = set()
    reservations: set[str] = set()
    for path in (data_files().tasks, tau3_files().tasks):
        with open(path, encoding="utf-8") as f:
            u, r = named_entities(json.load(f), db)
        users |= u
        reservations |= r
    return frozenset(users), frozenset(reservations)
