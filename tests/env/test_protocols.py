"""The two protocols through the env: gym (tau2's gym wrapper) and leaderboard (tau2 run)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from airline_gym.agents import DONE, GoldAgent, text_message, tool_call_message
from airline_gym.domain.schemas import done_schema, tool_schemas
from airline_gym.env import AirlineEnv
from airline_gym.env.protocols import get_protocol
from airline_gym.users.base import UserSimulator


def make(protocol: str, **kw: object) -> AirlineEnv:
    return AirlineEnv(task=17, user="scripted", protocol=protocol, **kw)  # type: ignore[arg-type]


def test_tools_per_protocol() -> None:
    gym_env, board = make("gym"), make("leaderboard")
    _, gym_info = gym_env.reset(seed=0)
    _, board_info = board.reset(seed=0)
    assert gym_info["tools"] == [*tool_schemas(), done_schema()]
    assert board_info["tools"] == tool_schemas()
    assert (gym_info["protocol"], board_info["protocol"]) == ("gym", "leaderboard")
    assert AirlineEnv(task=17, user="scripted").protocol.name == "gym"  # the default


def test_gym_make_takes_the_protocol() -> None:
    env = gym.make("AirlineScripted-v0", task=17, protocol="leaderboard")
    _, info = env.reset(seed=0)
    assert [t["function"]["name"] for t in info["tools"]][-1] == "get_flight_status"
    with pytest.raises(ValueError, match="protocol must be one of gym, leaderboard"):
        AirlineEnv(task=17, user="scripted", protocol="tau3")


@pytest.mark.parametrize("stop", [DONE, text_message("All set. ###STOP###")])
def test_agent_can_stop_under_gym_only(stop: dict) -> None:
    env = make("gym")
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step(stop)
    assert terminated and not truncated and info["termination_reason"] == "agent_stop"

    env = make("leaderboard", max_steps=30)
    env.reset(seed=0)
    done = False
    steps = 0
    while not done:
        obs, _, terminated, truncated, info = env.step(stop)
        done = terminated or truncated
        steps += 1
        if stop is DONE:  # an unknown tool under leaderboard, answered like any other
            assert obs[0]["content"] == "Error: Tool 'done' not found."
    assert info["termination_reason"] != "agent_stop"
    if stop is DONE:
        assert info["termination_reason"] == "too_many_errors" and steps == 10
    else:  # text goes to the customer, who eventually stops or the step budget runs out
        assert info["termination_reason"] in ("user_stop", "max_steps")
        assert any(m["role"] == "user" for m in info["messages"][3:])


def test_leaderboard_history_is_the_reference_shape() -> None:
    env = make("leaderboard")
    env.reset(seed=0)
    raw = '{"user_id":   "omar_rossi_1241"}'  # re-serialised with json.dumps in the history
    action = {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_user_details", "arguments": raw},
            }
        ],
    }
    _, _, _, _, info = env.step(action)
    greeting, _, call, result = info["messages"][1:5]
    assert greeting == {
        "role": "assistant",
        "content": "Hi! How can I help you today?",
        "tool_calls": None,
    }
    assert call == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "c1",
                "name": "get_user_details",
                "function": {
                    "name": "get_user_details",
                    "arguments": json.dumps({"user_id": "omar_rossi_1241"}),
                },
                "type": "function",
            }
        ],
    }
    assert list(result) == ["role", "content", "tool_call_id"] and result["tool_call_id"] == "c1"
    # the episode's own record keeps the model's string
    assert env.episode is not None
    assert env.episode.messages[2]["tool_calls"][0]["function"]["arguments"] == raw


def test_leaderboard_seed_goes_to_the_customer_as_is() -> None:
    seen: list[int | None] = []

    class Recorder(UserSimulator):
        def reset(self, task: object, seed: int | None = None) -> None:
            seen.append(seed)

        def reply(self, dialogue: object) -> str:
            return "Hello ###STOP###"

    for protocol in ("gym", "leaderboard"):
        env = AirlineEnv(task=17, user=Recorder(), protocol=protocol)  # type: ignore[arg-type]
        env.reset(seed=4242)
    assert seen[0] != 4242 and seen[1] == 4242


@pytest.mark.parametrize("protocol", ["gym", "leaderboard"])
def test_gold_agent_scores_under_both_protocols(protocol: str, tau2_tasks: object) -> None:
    env = make(protocol)
    agent = GoldAgent(tau2_tasks)  # type: ignore[arg-type]
    obs, info = env.reset(seed=0)
    agent.reset(info)
    done = False
    reward = 0.0
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    assert reward == 1.0
    assert info["termination_reason"] == ("agent_stop" if protocol == "gym" else "user_stop")


@pytest.mark.parametrize("protocol", ["gym", "leaderboard"])
@pytest.mark.parametrize(
    ("action", "error"),
    [
        ("get_user_details(user_id=", "Error: could not parse the call get_user_details"),
        (
            '{"name": "get_user_details", "arguments": {"user_id": }',
            "Error: could not parse the tool call get_user_details",
        ),
        ("bogus_tool(x=1)", "Error: Tool 'bogus_tool' not found."),
        ("get_user_details('omar_rossi_1241')", "Error: get_user_details(...): pass arguments"),
    ],
)
def test_tool_call_strings_that_do_not_parse_are_error_results(
    protocol: str, action: str, error: str
) -> None:
    env = make(protocol)
    env.reset(seed=0)
    obs, _, _, _, info = env.step(action)
    assert [m["role"] for m in obs] == ["tool"] and obs[0]["content"].startswith(error)
    assert info["num_errors"] == 1
    call = info["messages"][-2]
    assert call["role"] == "assistant" and call["tool_calls"][0]["function"]["name"] in error
    if "not found" not in error:  # unreadable: no arguments recorded, the error says why
        assert call["tool_calls"][0]["function"]["arguments"] == "{}"


@pytest.mark.parametrize("text", ["Sure (I can help with that).", "Thanks! (Reservation OK)"])
def test_ordinary_text_with_parentheses_goes_to_the_customer(text: str) -> None:
    env = make("gym")
    env.reset(seed=0)
    obs, _, _, _, info = env.step(text)
    assert [m["role"] for m in obs] == ["user"] and info["num_errors"] == 0


def test_get_protocol_accepts_instances() -> None:
    board = get_protocol("leaderboard")
    assert get_protocol(board) is board and not board.offers_done and not board.agent_text_stops
    unchanged = {"role": "tool", "tool_call_id": "x", "content": "c"}
    assert get_protocol("gym").public(unchanged) == unchanged
    assert get_protocol("gym").public(unchanged) is not unchanged
    assert tool_call_message("a", {}, "i")["tool_calls"][0]["id"] == "i"
