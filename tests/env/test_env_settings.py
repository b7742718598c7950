"""Rewards are +0.0 on ordinary steps; non-finite or negative settings are refused (11.17)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from airline_gym.env import AirlineEnv


def test_ordinary_steps_return_positive_zero() -> None:
    for penalty in (0.0, 0.5):
        env = AirlineEnv(task=17, user="scripted", error_penalty=penalty)
        env.reset(seed=0)
        _, reward, *_ = env.step({"role": "assistant", "content": "How can I help?"})
        assert reward == 0.0 and math.copysign(1.0, reward) == 1.0


def test_error_penalty_is_applied_and_finite() -> None:
    env = AirlineEnv(task=17, user="scripted", error_penalty=0.5)
    env.reset(seed=0)
    _, reward, *_ = env.step({"name": "no_such_tool", "arguments": {}})
    assert reward == -0.5


BAD = [
    {"error_penalty": math.inf},
    {"error_penalty": math.nan},
    {"error_penalty": -1.0},
    {"max_errors": math.nan},
    {"max_errors": math.inf},
    {"max_steps": math.inf},
    {"max_steps": 0},
    {"max_steps": -5},
    {"max_steps": 10.5},
    {"max_steps": True},
    {"max_errors": "10"},
]


@pytest.mark.parametrize("kwargs", BAD, ids=[str(b) for b in BAD])
def test_bad_settings_are_refused_at_construction(kwargs) -> None:
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        AirlineEnv(task=17, user="scripted", **kwargs)


def test_whole_numbers_of_any_int_type_are_accepted() -> None:
    env = AirlineEnv(task=17, user="scripted", max_steps=np.int64(50), max_errors=3)
    env.reset(seed=0)
    assert env.max_steps == 50
