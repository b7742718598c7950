"""What a trainer's rollout record keeps of an ended episode: the grade and the metrics beside it.

Shared by the adapters (verifiers' trace info, SkyRL's metrics, Inspect's score metadata, verl's
extra fields), so each reports the same numbers under the same names.
"""

from __future__ import annotations

from typing import Any

from airline_gym.domain.grading import (
    AGENT_ERROR,
    AGENT_STOP,
    MAX_STEPS,
    TOO_MANY_ERRORS,
    USER_ERROR,
    USER_STOP,
)
from airline_gym.env.airline_env import AirlineEnv

__all__ = ["TERMINATIONS", "episode_metrics", "episode_summary"]

#: Every way an episode ends: each is a 0/1 metric ``terminated_<reason>``.
TERMINATIONS = (AGENT_STOP, USER_STOP, MAX_STEPS, TOO_MANY_ERRORS, AGENT_ERROR, USER_ERROR)


def episode_summary(env: AirlineEnv, seed: int | None) -> dict[str, Any]:
    """What a rollout record keeps of ``env``'s ended episode, as plain data.

    ``reward`` is the env's grade (the official reward), ``reward_info`` its details (DB diff,
    communicate checks), ``benchmark`` the version played ("tau2" or "tau3").
    """
    episode = env.episode
    if episode is None or not episode.done:
        raise ValueError("the episode has not ended")
    reward_info = episode.grade().to_dict()
    tool_calls = sum(
        len(m.get("tool_calls") or []) for m in episode.messages if m["role"] == "assistant"
    )
    return {
        "task_id": episode.task.id,
        "seed": seed,
        "benchmark": env.benchmark,
        "reward": float(reward_info["reward"]),
        "termination_reason": episode.termination_reason,
        "steps": episode.step_count,
        "tool_calls": tool_calls,
        "tool_errors": episode.num_errors,
        "error": episode.error_detail,
        "reward_info": reward_info,
    }


def episode_metrics(summary: dict[str, Any]) -> dict[str, float]:
    """Steps, tool calls, tool errors and one 0/1 metric per termination reason."""
    metrics = {key: float(summary[key]) for key in ("steps", "tool_calls", "tool_errors")}
    for reason in TERMINATIONS:
        metrics[f"terminated_{reason}"] = float(summary["termination_reason"] == reason)
    return metrics
