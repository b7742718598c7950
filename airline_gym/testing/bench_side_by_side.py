"""What every section of ``airline-gym bench --vs-reference`` shares: both sides' data, the run
counts, and the figures and parity checks collected so far."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.domain.tasks import Task
from airline_gym.testing.bench_report import Figure

__all__ = ["SideBySide"]


@dataclass
class SideBySide:
    """One side-by-side run: ``ref`` is the imported reference, ``task`` the timed task."""

    ref: Any
    base: PristineDB
    tasks: list[Task]
    task: Task
    ref_tasks: dict[str, Any]
    repeat: int
    say: Callable[[str], None]
    figures: list[Figure] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)

    @property
    def few(self) -> int:
        """Runs of reference work that takes about a second each."""
        return min(self.repeat, 5)

    @property
    def many(self) -> int:
        """Runs of reference work that takes milliseconds."""
        return min(self.repeat, 200)

    def add(
        self,
        name: str,
        ours: float,
        theirs: float,
        unit: str,
        what: tuple[str, str],
        runs: tuple[int, int],
    ) -> None:
        """Record one figure (ours, the reference's, what each side ran, how many times)."""
        self.figures.append(Figure(name, ours, theirs, unit, what[0], what[1], runs))
        self.say(f"{name}: done")
