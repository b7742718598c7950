"""One simulation's re-grade next to its recorded reward, and the agreement line of many.

A re-grade is compared with the recorded reward only when both are grades on the same basis:
a re-grade on another basis (``--reward-basis``), a judge that failed (ours now, or the file's
then: ``reward_info.info.nl.error``) or a replay that raised is said as such, never called a
disagreement.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.domain.grading import INFRASTRUCTURE_ERROR, Grade

__all__ = ["RegradeResult", "summary"]

#: ``agrees`` in a JSON record by :meth:`RegradeResult.status` (vacuously true without a
#: recorded reward, as before; absent, i.e. null, when nothing was compared).
_AGREES = {"agree": True, "unrecorded": True, "disagree": False, "error": False}


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
    rebased: bool = False  # graded on another basis than the recorded reward's: not compared
    recorded_judge_error: str | None = None  # the file's NL judge failed: no recorded verdict

    @property
    def judge_error(self) -> str | None:
        """Why our NL judge gave no verdict (``None`` when it did, or was not asked)."""
        return None if self.grade is None else self.grade.judge_error

    def status(self) -> str:
        """``agree``, ``disagree``, ``error`` (replay or grading raised), ``judge_error`` (our
        judge failed), ``recorded_judge_error`` (the file's judge failed: nothing to compare),
        ``other_basis`` (graded on another basis than the recorded reward's) or
        ``unrecorded`` (no recorded reward)."""
        if self.error is not None:
            return "error"
        if self.judge_error:
            return "judge_error"
        if self.rebased:
            return "other_basis"
        if self.recorded_judge_error:
            return "recorded_judge_error"
        if self.recorded_reward is None:
            return "unrecorded"
        return "agree" if abs(self.reward - self.recorded_reward) < 1e-9 else "disagree"

    def agrees(self) -> bool:
        """Whether nothing went wrong: no disagreement, no replay error, no judge failure of
        ours (vacuously true when there is nothing to compare with)."""
        return self.status() not in ("disagree", "error", "judge_error")

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
            "agrees": _AGREES.get(self.status()),  # None: nothing compared
            "status": self.status(),
            "judge_error": self.judge_error,
            "recorded_judge_error": self.recorded_judge_error,
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


def _named(bad: list[RegradeResult]) -> str:
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
    return shown + more


def summary(results: Iterable[RegradeResult]) -> str:
    """``agreement: A/N simulations`` plus what was not compared and the disagreeing ones; for
    a re-grade on another basis, what it gave instead (no agreement: nothing to agree with)."""
    results = list(results)
    status = Counter(r.status() for r in results)
    other = [r for r in results if r.status() == "other_basis"]
    compared = [r for r in results if r.status() not in ("other_basis", "judge_error")]
    compared = [r for r in compared if r.status() != "recorded_judge_error"]
    bad = [r for r in results if r.status() in ("disagree", "error")]
    parts = []
    if other:
        passed = sum(abs(r.reward - 1) < 1e-9 for r in other)
        parts.append(
            f"re-graded under another basis than the recorded one ({_basis(other[0])}): "
            f"{len(other)} simulations, {passed} with reward 1 (not compared with the recorded "
            "rewards)"
        )
    if compared or not other:
        agreed = sum(r.agrees() for r in compared)
        text = f"agreement: {agreed}/{len(compared)} simulations"
        failed = sum(r.termination_reason == INFRASTRUCTURE_ERROR for r in compared)
        unrecorded = status["unrecorded"] - failed
        if unrecorded:
            text += f" ({unrecorded} without a recorded reward)"
        if failed:
            text += f" ({failed} infrastructure_error, not graded: no reward)"
        parts.append(text)
    if status["judge_error"]:
        parts.append(f"({status['judge_error']} NL judge failure(s) now: no verdict, not compared)")
    if status["recorded_judge_error"]:
        parts.append(
            f"({status['recorded_judge_error']} with a recorded NL judge failure: no recorded "
            "verdict to compare with)"
        )
    if bad:
        parts.append(f"({len(bad)} disagree: {_named(bad)})")
    return " ".join(parts)


def _basis(result: RegradeResult) -> str:
    return ",".join(result.reward_basis or ()) or "each task's own"
