"""First-time use of the customers: the env's greeting, a replay without a source (11.19)."""

from __future__ import annotations

import pytest

from airline_gym.domain.prompts import GREETING, STOP
from airline_gym.env import AirlineEnv
from airline_gym.users import make_user


def test_scripted_customer_answers_an_agent_that_opens_with_the_greeting() -> None:
    env = AirlineEnv(task=17, user="scripted", user_kwargs={"intents": False})
    obs, _ = env.reset(seed=0)
    opening = obs[0]["content"]
    obs, _, terminated, truncated, info = env.step({"role": "assistant", "content": GREETING})
    assert not (terminated or truncated), info["termination_reason"]
    reply = obs[0]["content"]
    assert STOP not in reply and reply.strip()
    assert "omar_rossi_1241" in opening  # the request is restated, not a hang-up
    # saying the same thing twice in a row is still a repetition the customer ends on
    obs, _, terminated, *_ = env.step({"role": "assistant", "content": GREETING})
    assert terminated and STOP in obs[0]["content"]


def test_replay_without_a_source_names_what_to_pass() -> None:
    with pytest.raises(ValueError, match=r"user_kwargs=\{'source'"):
        AirlineEnv(task=17, user="replay")
    with pytest.raises(ValueError, match="source"):
        make_user("replay")


def test_replay_with_a_list_source_still_works() -> None:
    env = AirlineEnv(task=17, user="replay", user_kwargs={"source": ["Hello there."]})
    obs, _ = env.reset(seed=0)
    assert obs[0]["content"] == "Hello there."
