"""gymnasium's AsyncVectorEnv: its default shared memory cannot hold message lists, and we say so
in one line naming what works (gymnasium's own error does not say how to pass it to make_vec)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401  (registers the env ids)
from airline_gym.env.spaces import NO_SHARED_MEMORY
from airline_gym.errors import ConfigError


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


@pytest.mark.parametrize("build", ["make_vec", "AsyncVectorEnv"])
def test_async_with_shared_memory_is_refused_in_one_line_naming_what_works(build):
    with pytest.raises(ConfigError) as info:
        if build == "make_vec":
            gym.make_vec("AirlineScripted-v0", num_envs=2, vectorization_mode="async", task=17)
        else:
            gym.vector.AsyncVectorEnv([make, make])
    message = str(info.value)
    assert "\n" not in message and message == NO_SHARED_MEMORY
    assert 'vector_kwargs={"shared_memory": False}' in message
    assert 'vectorization_mode="sync"' in message


def test_make_vec_async_runs_with_what_the_refusal_names():
    envs = gym.make_vec(
        "AirlineScripted-v0",
        num_envs=2,
        vectorization_mode="async",
        vector_kwargs={"shared_memory": False},
        task=17,
    )
    try:
        observations, _ = envs.reset(seed=0)
        assert [o[-1]["role"] for o in observations] == ["user", "user"]
    finally:
        envs.close()
