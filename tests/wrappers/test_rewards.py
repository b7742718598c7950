"""Reward-shaping wrappers: the same numbers as the env's own options, over one db_credit."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401  (registers the env ids)
from airline_gym.agents import tool_call_message
from airline_gym.domain.grading import db_credit
from airline_gym.errors import ConfigError
from airline_gym.wrappers import ErrorPenalty, PartialReward, ProgressReward


def _gold_then(task_id: str, extra: list[dict[str, Any]], keep: int | None = None) -> list[Any]:
    """The task's first ``keep`` gold actions as tool calls, then ``extra`` messages, then done."""
    env = gym.make("AirlineScripted-v0", task=task_id)
    gold = env.unwrapped.task_set[task_id].actions  # type: ignore[attr-defined]
    calls = [
        tool_call_message(a.name, dict(a.arguments), f"g{i}") for i, a in enumerate(gold[:keep])
    ]
    return [*calls, *extra, tool_call_message("done", {}, "end")]


BAD_CALL = tool_call_message("get_user_details", {"user_id": "nobody_0"}, "bad")
UNKNOWN_TOOL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "u", "type": "function", "function": {"name": "nope", "arguments": "{}"}}
    ],
}


def _rewards(env: gym.Env[Any, Any], actions: list[Any]) -> list[float]:
    env.reset(seed=3)
    out = []
    for action in actions:
        _, reward, terminated, truncated, _ = env.step(action)
        out.append(float(reward))
        if terminated or truncated:
            break
    return out


@pytest.mark.parametrize(
    ("task_id", "keep"),
    [("17", 1), ("17", 2), ("17", None), ("3", 0), ("11", None), ("0", 0)],
)
def test_wrappers_give_the_env_options_rewards(task_id: str, keep: int | None) -> None:
    actions = _gold_then(task_id, [BAD_CALL, UNKNOWN_TOOL], keep)
    options = gym.make("AirlineScripted-v0", task=task_id, reward="partial", error_penalty=0.25)
    wrapped = ErrorPenalty(
        PartialReward(gym.make("AirlineScripted-v0", task=task_id)), penalty=0.25
    )
    expected = _rewards(options, actions)
    assert _rewards(wrapped, actions) == pytest.approx(expected)
    assert min(expected) < 0  # the bad calls were charged
    official = _rewards(gym.make("AirlineScripted-v0", task=task_id), actions)
    if keep is not None and task_id == "17":  # part of the gold writes: partial, not official
        assert official[-1] == 0.0 and 0 < expected[-1] < 1


def test_partial_reward_refuses_a_shaped_env() -> None:
    with pytest.raises(ConfigError, match="official"):
        PartialReward(gym.make("AirlineScripted-v0", task=0, reward="partial"))
    with pytest.raises(ConfigError, match="penalty"):
        ErrorPenalty(gym.make("AirlineScripted-v0", task=0), penalty=-1)


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -float("inf"), 1 + 1j, "0.5", True, None, -1]
)
@pytest.mark.parametrize(
    ("wrapper", "name"), [(ProgressReward, "scale"), (ErrorPenalty, "penalty")]
)
def test_shaping_numbers_are_refused_at_construction(wrapper: Any, name: str, value: Any) -> None:
    env = gym.make("AirlineScripted-v0", task=0)
    with pytest.raises(ConfigError, match=f"^{name} must be a finite number") as refused:
        wrapper(env, value)
    assert repr(value) in str(refused.value) and "\n" not in str(refused.value)


def test_a_valid_scale_is_kept_as_a_float() -> None:
    env = ProgressReward(gym.make("AirlineScripted-v0", task=0), scale=2)
    assert env.scale == 2.0 and isinstance(env.scale, float)


def test_progress_reward_over_the_plain_env_sums_to_the_best_credit() -> None:
    env = ProgressReward(gym.make("AirlineScripted-v0", task="17"), scale=2.0)
    env.reset(seed=3)
    start = env.db_credit()
    rewards = []
    for action in _gold_then("17", [], None):
        rewards.append(float(env.step(action)[1]))
    episode = env.unwrapped.episode  # type: ignore[attr-defined]
    assert db_credit(episode.task, episode.db) == 1.0
    # each gold write pays its gain; the shaping sums to scale x (1 - starting credit)
    assert sum(rewards[:-1]) == pytest.approx(2.0 * (1.0 - start))
    assert sum(r > 0 for r in rewards[:-1]) == len(rewards) - 1
    assert rewards[-1] == pytest.approx(1.0)  # the official reward, nothing more to gain


def test_db_credit_counts_fields_against_the_gold_changes() -> None:
    env = gym.make("AirlineScripted-v0", task="17")
    env.reset(seed=0)
    episode = env.unwrapped.episode  # type: ignore[attr-defined]
    assert db_credit(episode.task, episode.db) == 0.0
    gold = episode.task.actions[0]
    env.step(tool_call_message(gold.name, dict(gold.arguments), "g"))
    first = db_credit(episode.task, episode.db)
    assert 0 < first < 1, json.dumps(gold.arguments)
