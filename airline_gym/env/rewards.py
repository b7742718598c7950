"""Reward options: the official tau2 reward (default) and opt-in denser signals for RL.

``official``: the terminal reward tau2-bench gives, DB check x communicate check, in {0, 1}.
``partial``: 1.0 when the official reward is 1.0; otherwise half credit for the DB (one minus the
share of fields still wrong, relative to the fields the gold actions change) plus half credit for
the share of communicate strings said. Premature endings still score 0.
``error_penalty``: subtracted on each step per tool error made in that step (default 0).

The same shaping composes as Gymnasium wrappers (:mod:`airline_gym.wrappers`); both use the
formulas of :mod:`airline_gym.domain.grading`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.grading import Grade, partial_credit
from airline_gym.domain.tasks import Task
from airline_gym.errors import ConfigError

if TYPE_CHECKING:
    from airline_gym.env.episode import Episode

REWARD_MODES = ("official", "partial")


@dataclass(frozen=True)
class RewardConfig:
    """How the env turns grades and errors into rewards."""

    mode: str = "official"
    error_penalty: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in REWARD_MODES:
            raise ConfigError(f"reward must be one of {', '.join(REWARD_MODES)}; got {self.mode!r}")
        if not self.error_penalty >= 0:
            raise ConfigError(f"error_penalty must be >= 0; got {self.error_penalty!r}")

    def terminal(self, grade: Grade, task: Task, db: AirlineDB) -> float:
        """The reward of the final step (before any error penalty)."""
        return grade.reward if self.mode == "official" else partial_credit(grade, task, db)

    def final(self, episode: Episode) -> tuple[float, dict[str, Any]]:
        """An ended episode's reward (before any error penalty) and its grade as plain data.

        Never raises: grading that fails ends the episode as ``agent_error``, reward 0, the
        cause recorded (:meth:`~airline_gym.env.episode.Episode.grading_failed`).
        """
        grade = episode.grade()
        try:
            return self.terminal(grade, episode.task, episode.db), grade.to_dict()
        except Exception as exc:
            failed = episode.grading_failed(exc)
            return failed.reward, failed.to_dict()
