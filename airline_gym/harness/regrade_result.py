"""One simulation's re-grade next to its recorded reward, and the agreement line of many."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.domain.grading import INFRASTRUCTURE_ERROR, Grade

__all__ = ["RegradeResult", "summary"]


@dataclass
class RegradeResult:
    """Our grade of one recorded simulation next to the reward recorded with it."""

    simulation_id: str
    task_id: str
    trial: int | None
    recorded_reward: float | None
    reward: float
    db_match: bool
    termination_reason: str
    output_mismatches: list[dict[str, Any]]  # {index, call_id, name, recorded, replayed}
    grade: Grade | None = field(repr=False)
    file: str = ""
    error: str | None = None  # the replay or grading raised: this is why
    checks_task: str | None = None  # the recorded action checks are this other task's
    reward_basis: tuple[str, ...] | None = None  # graded on this basis (None: the task's own)

    def agrees(self) -> bool:
        """Whether our reward equals the recorded one (vacuously true when none was recorded,
        or when graded on another basis than the task's own: then only errors disagree)."""
        if self.error is not None or (self.grade is not None and self.grade.judge_error):
            return False
        if self.reward_basis is not None or self.recorded_reward is None:
            return True
        return abs(self.reward - self.recorded_reward) < 1e-9

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready summary record (mismatches counted, diffs as text)."""
        g = self.grade
        return {
            "file": self.file,
            "simulation_id": self.simulation_id,
            "task_id": self.task_id,
            "trial": self.trial,
            "recorded_reward": self.recorded_reward,
            "reward": self.reward,
            "agrees": self.agrees(),
            "db_match": self.db_match,
            "communicate_reward": None if g is None else g.communicate_reward,
            "termination_reason": self.termination_reason,
            "output_mismatches": len(self.output_mismatches),
            "db_diff": [] if g is None else [str(d) for d in g.db_diff],
            "note": "" if g is None else g.note,
            "error": self.error,
            "reward_basis": None if self.reward_basis is None else list(self.reward_basis),
            "action_reward": None if g is None else g.action_reward,
            "nl_assertions": None
            if g is None or g.nl_assertions is None
            else [dataclasses.asdict(c) for c in g.nl_assertions],
        }


_SHOWN = 10  # disagreements named in the summary line


def _fmt_reward(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def summary(results: Iterable[RegradeResult]) -> str:
    """``agreement: A/N simulations`` plus the disagreeing ones."""
    results = list(results)
    bad = [r for r in results if not r.agrees()]
    text = f"agreement: {len(results) - len(bad)}/{len(results)} simulations"
    failed = sum(r.termination_reason == INFRASTRUCTURE_ERROR for r in results)
    unrecorded = sum(r.recorded_reward is None for r in results) - failed
    if unrecorded:
        text += f" ({unrecorded} without a recorded reward)"
    if failed:
        text += f" ({failed} infrastructure_error, not graded: no reward)"
    if bad:
        shown = ", ".join(
            f"{Path(r.file).name}:{r.simulation_id} (task {r.task_id}, "
            + (
                f"error {r.error}"
                if r.error
                else f"recorded {_fmt_reward(r.recorded_reward)}, ours {_fmt_reward(r.reward)}"
            )
            + ")"
            for r in bad[:_SHOWN]
        )
        more = f", and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
        text += f" ({len(bad)} disagree: {shown}{more})"
    return text
