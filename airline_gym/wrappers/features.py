"""The ``Box(0, 1)`` observation of :class:`~airline_gym.wrappers.CandidateActionWrapper`.

Features are appended block by block to a :class:`Features` list, each block always the same
width (a missing value is zeros), so the layout is defined once, by the code that fills it, and
its size is measured from it rather than counted by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from airline_gym.domain.policy import CABINS, MEMBERSHIPS
from airline_gym.domain.tools import TOOLS
from airline_gym.env.actions import DONE_TOOL
from airline_gym.wrappers.candidates import KINDS, Candidate, Knowledge

__all__ = ["GLOBAL_SIZE", "SLOT_SIZE", "Features", "global_features", "slot_features"]

TOOL_NAMES = (*TOOLS, DONE_TOOL)


@dataclass
class Features:
    """A feature vector under construction; every method appends a fixed number of values."""

    values: list[float] = field(default_factory=list)

    def flag(self, value: bool) -> None:
        """One value: 1 or 0."""
        self.values.append(float(value))

    def fraction(self, count: float, cap: float) -> None:
        """One value: ``count / cap``, at most 1."""
        self.values.append(min(count, cap) / cap)

    def one_hot(self, value: Any, choices: Sequence[Any]) -> None:
        """``len(choices)`` values; all 0 when ``value`` is not among ``choices``."""
        self.values.extend(float(value == choice) for choice in choices)


def slot_features(candidate: Candidate | None, knowledge: Knowledge, distinct: bool) -> Features:
    """One action slot: distinct, already taken, argument and payment mentioned, kind."""
    out = Features()
    out.flag(distinct and candidate is not None)
    out.flag(candidate is not None and knowledge.taken[candidate.key] > 0)
    out.flag(candidate is not None and candidate.mentioned)
    out.flag(candidate is not None and candidate.pays_preferred)
    out.one_hot(None if candidate is None else candidate.kind, KINDS)
    return out


@dataclass(frozen=True)
class Progress:
    """The wrapper's and the env's counters the global features read."""

    actions: int = 0
    max_actions: int = 1
    errors: int = 0
    max_errors: int = 1
    candidates: int = 0
    slots: int = 1
    ended: bool = False


def global_features(knowledge: Knowledge, progress: Progress) -> Features:
    """Tool-call counts, progress, the last result and the focus reservation."""
    k, out = knowledge, Features()
    for name in TOOL_NAMES:
        out.fraction(k.tool_counts[name], 3)
    out.fraction(progress.actions, progress.max_actions)
    out.fraction(progress.errors, progress.max_errors)
    out.flag(k.last_error)
    out.flag(k.last_role == "user")
    out.one_hot(k.last_result, ("user", "reservation", "other"))
    out.fraction(k.writes_ok, 5)
    out.fraction(k.customer_turns, 10)
    out.fraction(progress.candidates, progress.slots)
    reservation: dict[str, Any] = k.reservations.get(k.focus or "") or {}
    owner = k.users.get(str(reservation.get("user_id"))) or {}
    out.flag(bool(reservation))
    out.one_hot(reservation.get("cabin"), CABINS)
    out.fraction(len(reservation.get("passengers") or ()), 9)
    out.fraction(int(reservation.get("total_baggages") or 0), 9)
    out.flag(reservation.get("status") == "cancelled")
    out.one_hot(owner.get("membership"), MEMBERSHIPS)
    out.flag(progress.ended)
    return out


SLOT_SIZE = len(slot_features(None, Knowledge(), False).values)
GLOBAL_SIZE = len(global_features(Knowledge(), Progress()).values)


def observation(
    candidates: Sequence[Candidate], knowledge: Knowledge, progress: Progress, cycle: bool
) -> np.ndarray:
    """The whole vector: ``progress.slots`` slots, then the global features.

    With ``cycle``, a slot past the candidate count repeats its candidate's features but is
    not marked distinct.
    """
    values: list[float] = []
    for i in range(progress.slots):
        if i < len(candidates):
            candidate: Candidate | None = candidates[i]
        else:
            candidate = candidates[i % len(candidates)] if cycle and candidates else None
        values += slot_features(candidate, knowledge, i < len(candidates)).values
    values += global_features(knowledge, progress).values
    return np.asarray(values, dtype=np.float32)
