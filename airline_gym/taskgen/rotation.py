"""Draws from a pool without repeats until the pool is used up, so that a bin's tasks spread
over every customer and reservation the DB offers it before any comes back.

Each pool (a key: a bin's reservations, or the users a booking draws from, within a scope: the
entry of the mix being proposed) keeps the ids not yet used this round. A draw picks one of them
at random; the generator then settles the proposal's draws: an id whose task was kept leaves the
round, an id whose proposal failed stays for another try and leaves after :data:`TRIES` failures
(its reservation may suit the bin's test yet never give a task the mix wants: no wide date, a
tie). When every id has left, a new round starts.

>>> import random
>>> rotation, rng = Rotation(), random.Random(0)
>>> drawn = []
>>> for _ in range(3):
...     drawn.append(rotation.draw(rng, "bin", ("a", "b", "c")))
...     rotation.settle(kept=True)
>>> sorted(drawn), rotation.rounds("", "bin")
(['a', 'b', 'c'], 1)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["TRIES", "Rotation"]

#: Failed proposals an id gets in one round before it leaves the round.
TRIES = 20


@dataclass
class _Round:
    ids: list[str]
    place: dict[str, int]
    failures: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, pool: Sequence[str]) -> _Round:
        ids = list(pool)
        return cls(ids, {rid: i for i, rid in enumerate(ids)})

    def remove(self, rid: str) -> None:
        """Drop ``rid`` from the round in O(1) (the last id takes its place)."""
        at = self.place.pop(rid, None)
        if at is None:
            return
        last = self.ids.pop()
        if last != rid:
            self.ids[at] = last
            self.place[last] = at


@dataclass
class Rotation:
    """The rounds of every pool, and the draws of the proposal being judged."""

    #: Prefixed to every key: the generator sets it to the template being proposed, so that
    #: each entry of the mix spreads over its own pool.
    scope: str = ""
    _rounds: dict[str, _Round] = field(default_factory=dict)
    _count: dict[str, int] = field(default_factory=dict)
    _pending: list[tuple[str, str]] = field(default_factory=list)

    def draw(self, rng: random.Random, key: str, pool: Sequence[str]) -> str | None:
        """An id of ``pool`` not used in this round of ``key`` (None when the pool is empty)."""
        if not pool:
            return None
        key = f"{self.scope}:{key}"
        current = self._rounds.get(key)
        if current is None or not current.ids:
            current = self._rounds[key] = _Round.of(pool)
            self._count[key] = self._count.get(key, 0) + 1
        rid = current.ids[rng.randrange(len(current.ids))]
        self._pending.append((key, rid))
        return rid

    def settle(self, kept: bool) -> None:
        """The proposal drawn since the last call was kept (or not): update the rounds."""
        for key, rid in self._pending:
            current = self._rounds[key]
            if kept:
                current.remove(rid)
                continue
            current.failures[rid] = current.failures.get(rid, 0) + 1
            if current.failures[rid] >= TRIES:
                current.remove(rid)
        self._pending.clear()

    def rounds(self, scope: str, key: str) -> int:
        """How many rounds ``key`` has started in ``scope`` (above 1: its pool was used up)."""
        return self._count.get(f"{scope}:{key}", 0)
