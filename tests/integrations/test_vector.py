"""gymnasium's AsyncVectorEnv: its default shared memory cannot hold message lists, and says so."""

from __future__ import annotations

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401  (registers the env ids)


def make():
    return gym.make("AirlineScripted-v0", task=17)


def test_default_shared_memory_fails_at_construction_naming_the_fix():
    with pytest.raises(ValueError, match=r"shared_memory=False"):
        gym.vector.AsyncVectorEnv([make, make])


def test_without_shared_memory_it_runs_episodes():
    envs = gym.vector.AsyncVectorEnv([make, make], shared_memory=False)
    try:
        observations, infos = envs.reset(seed=0)
        assert [o[-1]["role"] for o in observations] == ["user", "user"]
        done = {"role": "assistant", "content": None,
                "tool_calls": [{"id": "d", "type": "function",
                                "function": {"name": "done", "arguments": "{}"}}]}  # fmt: skip
        _, rewards, terminated, _, infos = envs.step((done, done))
        assert list(terminated) == [True, True] and list(rewards) == [0.0, 0.0]
    finally:
        envs.close()
