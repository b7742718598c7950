"""What a generated task set holds: counts by kind, outcome, tier, cabin, passengers and
payment methods, read from each record's ``"airline_gym"`` key."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["DIMENSIONS", "describe", "distribution", "payment_sources"]

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
)


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


def describe(record: Mapping[str, Any]) -> dict[str, list[str]]:
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
    }


def distribution(records: Iterable[Mapping[str, Any]]) -> dict[str, Counter[str]]:
    """Dimension -> value -> number of tasks with that value."""
    out: dict[str, Counter[str]] = {d: Counter() for d in DIMENSIONS}
    for record in records:
        for dim, values in describe(record).items():
            out[dim].update(set(values))
    return out
