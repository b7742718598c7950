"""What the env does with each form of action: tool calls in every accepted spelling, text for
the customer, malformed and non-message actions (as error observations, never exceptions)."""

from __future__ import annotations

import json
import types

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import airline_gym  # noqa: F401
from airline_gym.agents import tool_call_message

# --- actions -----------------------------------------------------------------------------------
ACTION_FORMS = {
    "openai dict": tool_call_message("get_user_details", {"user_id": "omar_rossi_1241"}, "x1"),
    "json string": json.dumps(
        {"name": "get_user_details", "arguments": {"user_id": "omar_rossi_1241"}}
    ),
    "functional": "get_user_details(user_id='omar_rossi_1241')",
    "bare identifier": "get_user_details(user_id=omar_rossi_1241)",
    "multi-line functional": "get_user_details(\n    user_id='omar_rossi_1241',\n)",
    "message object": types.SimpleNamespace(
        role="assistant",
        content=None,
        tool_calls=[
            types.SimpleNamespace(
                id="x2",
                type="function",
                function=types.SimpleNamespace(
                    name="get_user_details", arguments='{"user_id": "omar_rossi_1241"}'
                ),
            )
        ],
    ),
}


@pytest.mark.parametrize("form", list(ACTION_FORMS))
def test_every_action_form_runs_the_tool(form):
    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    obs, _reward, _terminated, _truncated, info = env.step(ACTION_FORMS[form])
    assert len(obs) == 1 and obs[0]["role"] == "tool"
    assert json.loads(obs[0]["content"])["user_id"] == "omar_rossi_1241"
    assert info["num_errors"] == 0 and info["step_count"] == 3


def test_litellm_message_object_is_accepted():
    litellm = pytest.importorskip("litellm")
    message = litellm.Message(
        content=None,
        role="assistant",
        tool_calls=[
            {
                "id": "y",
                "type": "function",
                "function": {
                    "name": "get_reservation_details",
                    "arguments": '{"reservation_id": "FQ8APE"}',
                },
            }
        ],
    )
    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    obs, *_ = env.step(message)
    assert obs[0]["tool_call_id"] == "y" and '"FQ8APE"' in obs[0]["content"]


def test_plain_text_goes_to_the_user_and_the_user_answers():
    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    obs, *_, info = env.step("Could you tell me your user id?")
    assert [m["role"] for m in obs] == ["user"] and "omar_rossi_1241" in obs[0]["content"]
    assert info["messages"][-2] == {
        "role": "assistant",
        "content": "Could you tell me your user id?",
    }


def test_several_tool_calls_in_one_message_run_in_order_as_one_step():
    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {
                    "name": "send_certificate",
                    "arguments": '{"user_id": "omar_rossi_1241", "amount": 50}',
                },
            },
            {
                "id": "b",
                "type": "function",
                "function": {
                    "name": "send_certificate",
                    "arguments": '{"user_id": "omar_rossi_1241", "amount": 60}',
                },
            },
        ],
    }
    obs, *_, info = env.step(message)
    assert [o["tool_call_id"] for o in obs] == ["a", "b"]
    assert obs[0]["content"].startswith("Certificate certificate_3221322 added")
    assert obs[1]["content"].startswith("Certificate certificate_3221323 added")
    assert info["step_count"] == 3  # user 1, agent 2, tools 3


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (
            tool_call_message("get_user_details", {"user_id": 42}, "e"),
            "Error: invalid arguments for get_user_details: "
            "'user_id' must be a string; got number 42",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "e",
                        "type": "function",
                        "function": {"name": "get_user_details", "arguments": "{not json"},
                    }
                ],
            },
            "Error: invalid arguments for get_user_details: arguments are not valid JSON",
        ),
        (
            tool_call_message("fly_me_to_the_moon", {}, "e"),
            "Error: Tool 'fly_me_to_the_moon' not found.",
        ),
        (
            tool_call_message("get_user_details", {}, "e"),
            "Error: invalid arguments for get_user_details: missing required argument 'user_id'",
        ),
    ],
)
def test_malformed_tool_calls_become_error_observations_and_count(action, expected):
    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs[0]["role"] == "tool" and obs[0]["content"].startswith(expected)
    assert info["num_errors"] == 1 and not (terminated or truncated) and reward == 0.0


@pytest.mark.parametrize(
    "action",
    ["", "   ", None, {"role": "assistant", "content": ""}, 3.5, {"role": "user", "content": "hi"}],
)
def test_actions_that_are_not_messages_give_a_system_error_and_count(action):
    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    assert not env.action_space.contains(action)
    obs, _reward, _terminated, _truncated, info = env.step(action)
    assert [m["role"] for m in obs] == ["system"] and obs[0]["content"].startswith(
        "Error: invalid action"
    )
    assert info["num_errors"] == 1 and env.observation_space.contains(obs)


def test_ten_invalid_actions_end_the_episode_truncated():
    env = gym.make("AirlineScripted-v0", task=17)
    env.reset(seed=0)
    for _ in range(10):
        _obs, _reward, terminated, truncated, info = env.step("")
    assert truncated and not terminated and info["termination_reason"] == "too_many_errors"


# --- hypothesis: nothing escapes step() ----------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
tool_names = st.sampled_from(
    [
        "get_user_details",
        "book_reservation",
        "calculate",
        "done",
        "update_reservation_flights",
        "nope",
        "",
    ]
)
arbitrary_actions = st.one_of(
    st.text(max_size=80),
    json_values,
    st.builds(
        lambda n, a: (
            tool_call_message(n, a, "h")
            if isinstance(a, dict)
            else {
                "role": "assistant",
                "tool_calls": [{"id": "h", "function": {"name": n, "arguments": a}}],
            }
        ),
        tool_names,
        json_values,
    ),
)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(actions=st.lists(arbitrary_actions, min_size=1, max_size=6))
def test_arbitrary_actions_never_raise_and_observations_stay_in_the_space(actions):
    env = gym.make("AirlineScripted-v0", task=11)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    for action in actions:
        obs, reward, terminated, truncated, _info = env.step(action)
        assert env.observation_space.contains(obs)
        assert isinstance(reward, float)
        if terminated or truncated:
            break
