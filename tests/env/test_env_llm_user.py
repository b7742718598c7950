"""Airline-v0 with the LLM customer, end to end through litellm to a local server."""

from __future__ import annotations

import time

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401
from airline_gym.agents import DONE, text_message
from airline_gym.domain.prompts import user_system_prompt
from airline_gym.testing.openai_server import OpenAIServer, Reply


def make(server: OpenAIServer, **llm_args):
    args = {"api_base": server.base_url, "api_key": "sk-test", "backoff": 0.01, **llm_args}
    return gym.make("Airline-v0", task=17, user_model="openai/sim", user_llm_args=args)


def test_prompt_roles_and_seed_on_the_wire():
    replies = [
        Reply(content="Hi, I'm omar_rossi_1241 and I need changes."),
        Reply(content="It's FQ8APE."),
        Reply(content="Thanks! ###STOP###"),
    ]
    with OpenAIServer(replies) as server:
        env = make(server)
        obs, info = env.reset(seed=11)
        assert obs == [{"role": "user", "content": "Hi, I'm omar_rossi_1241 and I need changes."}]
        env.step(text_message("Which reservation?"))
        obs, reward, terminated, truncated, info = env.step(text_message("Done, anything else?"))
    task = env.unwrapped.episode.task
    first, second, third = server.requests
    assert first["messages"] == [
        {"role": "system", "content": user_system_prompt(task)},
        {"role": "user", "content": "Hi! How can I help you today?"},
    ]
    assert third["messages"][1:] == [
        {"role": "user", "content": "Hi! How can I help you today?"},
        {"role": "assistant", "content": "Hi, I'm omar_rossi_1241 and I need changes."},
        {"role": "user", "content": "Which reservation?"},
        {"role": "assistant", "content": "It's FQ8APE."},
        {"role": "user", "content": "Done, anything else?"},
    ]
    assert "tools" not in first and first["temperature"] == 0.0
    assert first["seed"] == second["seed"] and isinstance(first["seed"], int)
    assert (terminated, truncated, info["termination_reason"]) == (True, False, "user_stop")
    # the same reset seed gives the same provider seed
    with OpenAIServer([Reply(content="hello ###STOP###")]) as again:
        make(again).reset(seed=11)
    assert again.requests[0]["seed"] == first["seed"]


def test_agent_tool_calls_are_never_shown_to_the_customer():
    replies = [Reply(content="Hello, I'm omar_rossi_1241."), Reply(content="ok ###STOP###")]
    with OpenAIServer(replies) as server:
        env = make(server)
        env.reset(seed=0)
        action = {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "t",
                    "type": "function",
                    "function": {
                        "name": "get_user_details",
                        "arguments": '{"user_id": "omar_rossi_1241"}',
                    },
                }
            ],
        }
        obs, *_ = env.step(action)
        assert obs[0]["role"] == "tool" and len(server.requests) == 1  # the user was not asked
        env.step(text_message("Found you."))
    shown = [m["content"] for m in server.requests[1]["messages"][1:]]
    assert shown == ["Hi! How can I help you today?", "Hello, I'm omar_rossi_1241.", "Found you."]


@pytest.mark.parametrize("fault", ["hang", "500", "empty"])
def test_customer_llm_faults_end_the_episode_with_user_error(fault):
    with OpenAIServer(default=Reply(fault=fault, hang_seconds=5)) as server:
        env = make(server, timeout=0.5, max_retries=2)
        start = time.perf_counter()
        obs, info = env.reset(seed=0)
        elapsed = time.perf_counter() - start
        assert obs == [] and info["termination_reason"] == "user_error"
        assert "user simulator" in info["error"]
        assert len(server.requests) == 3  # one try plus two bounded retries
        assert elapsed < 10
        obs, reward, terminated, truncated, info = env.step(DONE)  # the ending, told once
        assert (reward, terminated, truncated) == (0.0, False, True)
        with pytest.raises(gym.error.ResetNeeded, match=r"ended \(user_error\)"):
            env.step(DONE)


def test_customer_fault_mid_episode_ends_truncated_with_cause():
    with OpenAIServer(
        [Reply(content="Hi, omar_rossi_1241 here.")], default=Reply(fault="500")
    ) as server:
        env = make(server, max_retries=1)
        env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(text_message("How can I help?"))
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["termination_reason"] == "user_error" and "500" in info["error"]
    assert info["reward_info"]["reward"] == 0.0
