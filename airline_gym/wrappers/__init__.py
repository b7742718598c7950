"""Gymnasium wrappers over :class:`~airline_gym.env.AirlineEnv`.

Reward shaping (:class:`PartialReward`, :class:`ErrorPenalty`, :class:`ProgressReward`, all
over one :func:`~airline_gym.domain.grading.db_credit`), and the candidate-action wrapper that
gives classic RL libraries ``Discrete`` actions and ``Box`` observations
(:class:`CandidateActionWrapper`).
"""

from __future__ import annotations

from airline_gym.wrappers.candidate_actions import INFO_KEYS, PADDINGS, CandidateActionWrapper
from airline_gym.wrappers.candidates import KINDS, Candidate, Knowledge, generate_candidates
from airline_gym.wrappers.rewards import ErrorPenalty, PartialReward, ProgressReward

__all__ = [
    "INFO_KEYS",
    "KINDS",
    "PADDINGS",
    "Candidate",
    "CandidateActionWrapper",
    "ErrorPenalty",
    "Knowledge",
    "PartialReward",
    "ProgressReward",
    "generate_candidates",
]
