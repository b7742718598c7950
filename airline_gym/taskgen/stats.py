"""What a generated task set holds: counts by kind, outcome, tier, cabin, passengers, payment
methods and trait, read from each record's ``"airline_gym"`` key.

A record's traits are its ``traits`` field (``generate`` writes it); a record without one (a file
made before traits existed) gets them computed from its ``intent`` against the pristine DB, and
a record with neither counts as trait ``unknown``, never as a task without traits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.intents import Intent
from airline_gym.taskgen.traits import TRAITS, UNKNOWN, task_traits

__all__ = ["DIMENSIONS", "describe", "distribution", "payment_sources", "trait_shares"]

#: The dimensions :func:`distribution` counts, in display order.
DIMENSIONS: tuple[str, ...] = (
    "kind",
    "outcome",
    "requests",
    "db",
    "tier",
    "cabin",
    "passengers",
    "payment",
    "trait",
)
#: A DB to compute traits against (called only for records without a ``traits`` field).
DBSource = Callable[[], AirlineDB]


def payment_sources(actions: Iterable[Mapping[str, Any]]) -> list[str]:
    """The kinds of payment method (credit_card, gift_card, certificate) the writes use."""
    found: set[str] = set()
    for action in actions:
        args = action.get("arguments") or {}
        ids = [args.get("payment_id")] + [
            p.get("payment_id") for p in args.get("payment_methods") or []
        ]
        for pid in ids:
            if isinstance(pid, str) and "_" in pid:
                found.add(pid.rsplit("_", 1)[0])
    return sorted(found)


def _pristine() -> AirlineDB:
    from airline_gym.domain.database import load_pristine

    return load_pristine().fork()


def _traits(meta: Mapping[str, Any], db: DBSource) -> list[str]:
    traits = meta.get("traits")
    if isinstance(traits, list):
        return [str(t) for t in traits]
    if isinstance(meta.get("intent"), Mapping):
        return task_traits(Intent.from_json(meta["intent"]), db())
    return [UNKNOWN]


def describe(record: Mapping[str, Any], db: DBSource = _pristine) -> dict[str, list[str]]:
    """One task's values on every dimension (a dimension may hold several, e.g. kinds)."""
    meta = record.get("airline_gym") or {}
    kinds = list(meta.get("kinds") or [])
    outcomes = list(meta.get("outcomes") or [])
    return {
        "kind": kinds,
        "outcome": [f"{k}: {o}" for k, o in zip(kinds, outcomes, strict=False)],
        "requests": [str(len(kinds))],
        "db": ["changes" if meta.get("changes_db") else "unchanged"],
        "tier": [str(meta.get("tier", "-"))],
        "cabin": [str(meta.get("cabin", "-"))],
        "passengers": [str(meta.get("passengers", "-"))],
        "payment": meta.get("payment_methods") or ["none"],
        "trait": _traits(meta, db),
    }


def distribution(
    records: Iterable[Mapping[str, Any]], db: DBSource = _pristine
) -> dict[str, Counter[str]]:
    """Dimension -> value -> number of tasks with that value; every trait of :data:`TRAITS` is
    counted, at 0 when no task has it. ``db`` is loaded once, if a record needs it."""
    out: dict[str, Counter[str]] = {d: Counter() for d in DIMENSIONS}
    out["trait"].update(dict.fromkeys(TRAITS, 0))
    loaded: list[AirlineDB] = []

    def once() -> AirlineDB:
        if not loaded:
            loaded.append(db())
        return loaded[0]

    for record in records:
        for dim, values in describe(record, once).items():
            out[dim].update(set(values))
    return out


def trait_shares(counts: Mapping[str, Counter[str]], tasks: int) -> dict[str, float]:
    """Trait -> the share of ``tasks`` that have it (0.0 for no tasks)."""
    return {t: round(n / tasks, 4) if tasks else 0.0 for t, n in counts["trait"].items()}
