"""The ``tool-reply`` protocol in the env: the customer through ``respond_to_user``, TRL's way.

What the agent is offered and shown, how a turn plays (call by call), how it ends (``done``, the
customer, a limit, ``no_tool_call``), what is graded (the conversation as text turns), and bad
input answered as errors, never raised; the sync and async paths alike."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from airline_gym.domain.tool_reply import INSTRUCTIONS, RESPOND_TOOL, tool_reply_form
from airline_gym.env import AirlineEnv
from airline_gym.env.protocols import PROTOCOLS, get_protocol


def call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def message(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def say(text: str, call_id: str = "say") -> dict[str, Any]:
    return message(call(RESPOND_TOOL, json.dumps({"message": text}), call_id))


def gold_calls(tasks: Any, task_id: str) -> list[dict[str, Any]]:
    return [
        call(a.name, json.dumps(a.arguments), f"g{i}") for i, a in enumerate(tasks[task_id].actions)
    ]


@pytest.fixture
def env() -> AirlineEnv:
    return AirlineEnv(user="scripted", protocol="tool-reply")


def test_the_agent_is_offered_the_protocols_tools_and_prompt(env: AirlineEnv) -> None:
    reference = AirlineEnv(user="scripted").tools  # gym: the 14 and done, the reference's
    assert [t["function"]["name"] for t in env.tools] == sorted(
        [t["function"]["name"] for t in reference] + [RESPOND_TOOL]
    )
    by_name = {t["function"]["name"]: t for t in env.tools}
    for tool in reference:
        assert by_name[tool["function"]["name"]] == tool_reply_form(tool)
    observation, info = env.reset(seed=0, options={"task": "17"})
    assert info["protocol"] == "tool-reply" and info["system_prompt"].endswith(INSTRUCTIONS)
    assert info["messages"][0]["content"] == info["system_prompt"]
    assert [m["role"] for m in info["messages"]] == ["system", "assistant", "user"]
    assert observation == [info["messages"][2]]  # the customer's opening, as in every protocol
    assert not get_protocol("tool-reply").leaderboard_comparable
    assert [get_protocol(p).leaderboard_comparable for p in PROTOCOLS].count(True) == 1


def test_the_gold_through_respond_to_user_scores_one(env: AirlineEnv, tau2_tasks: Any) -> None:
    env.reset(seed=0, options={"task": "17"})
    observation, reward, terminated, _, info = env.step(say("Which reservation is it?"))
    assert [m["role"] for m in observation] == ["tool"] and not terminated
    reply = observation[0]["content"]
    assert observation[0]["tool_call_id"] == "say" and reply
    for gold in gold_calls(tau2_tasks, "17"):
        observation, reward, terminated, _, info = env.step(message(gold))
    observation, reward, terminated, truncated, info = env.step(message(call("done", "{}", "d")))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["termination_reason"] == "agent_stop"
    # the agent's view: its calls and their results; the graded transcript: text turns
    view = info["messages"]
    assert view[3]["tool_calls"][0]["function"]["name"] == RESPOND_TOOL
    assert view[4] == {"role": "tool", "tool_call_id": "say", "content": reply}
    transcript = env.episode.transcript()
    assert transcript[2] == {"role": "assistant", "content": "Which reservation is it?"}
    assert transcript[3] == {"role": "user", "content": reply}
    assert not any(
        c["function"]["name"] == RESPOND_TOOL for m in transcript for c in m.get("tool_calls") or []
    )


def test_several_calls_in_one_message_play_one_by_one(env: AirlineEnv, tau2_tasks: Any) -> None:
    """As TRL plays them: each call its own turn; the message as sent in the agent's view."""
    env.reset(seed=0, options={"task": "17"})
    calls = [
        call(RESPOND_TOOL, {"message": "Let me check."}, "s1"),
        *gold_calls(tau2_tasks, "17"),
        call("done", "{}", "d"),
        call("calculate", '{"expression": "1+1"}', "after"),  # after done: not played
    ]
    observation, reward, terminated, _, info = env.step(message(*calls, content="thinking..."))
    assert terminated and reward == 1.0
    assert [m["tool_call_id"] for m in observation] == [c["id"] for c in calls[:-1]]
    shown = info["messages"][3]
    assert shown["content"] == "thinking..." and len(shown["tool_calls"]) == len(calls) - 1
    transcript = env.episode.transcript()
    assert "thinking..." not in json.dumps(transcript)  # text beside calls reaches no one
    assistant = [m for m in transcript if m["role"] == "assistant"][1:]
    assert [len(m.get("tool_calls") or []) for m in assistant] == [0] + [1] * (len(calls) - 2)


@pytest.mark.parametrize(
    ("action", "ending"),
    [
        ({"role": "assistant", "content": "Goodbye!"}, "no_tool_call"),
        ("Hello there", "no_tool_call"),  # a tau2-gym text action
    ],
)
def test_a_reply_without_a_tool_call_ends_the_episode_unfinished(
    env: AirlineEnv, action: Any, ending: str
) -> None:
    env.reset(seed=0, options={"task": "17"})
    observation, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["termination_reason"] == ending and info["reward_info"]["reward"] == 0.0
    assert env.episode.transcript()[-1]["role"] == "assistant"  # recorded, never sent


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"message": ""}', "empty action"),
        ({"message": None}, "empty action"),
        ({"message": 5}, "message content must be a string"),
        ({"message": "x" * 1_000_001}, "message too long"),
        ({"text": "hi"}, "takes one argument, message"),
        ("{not json", "arguments are not JSON"),
    ],
)
def test_a_bad_respond_to_user_is_an_error_result_and_the_episode_goes_on(
    env: AirlineEnv, arguments: Any, reason: str
) -> None:
    env.reset(seed=0, options={"task": "17"})
    observation, reward, terminated, _, info = env.step(message(call(RESPOND_TOOL, arguments, "r")))
    (result,) = observation
    assert result["role"] == "tool" and result["content"].startswith("Error: invalid action")
    assert reason in result["content"] and not terminated and info["num_errors"] == 1
    assert [m["role"] for m in env.episode.transcript()] == ["assistant", "user"]  # nothing said
    observation, *_ = env.step(say("Could you give me your user id?"))
    assert observation[0]["role"] == "tool" and not observation[0]["content"].startswith("Error")


def test_an_ending_is_said_in_the_last_result_for_a_model_that_reads_on() -> None:
    env = AirlineEnv(user="scripted", protocol="tool-reply", max_errors=1)
    env.reset(seed=0, options={"task": "17"})
    observation, reward, terminated, truncated, info = env.step(say(""))
    assert truncated and info["termination_reason"] == "too_many_errors"
    assert observation[0]["content"].endswith("(The conversation is over: too_many_errors.)")


def test_respond_to_user_is_an_unknown_tool_under_the_other_protocols() -> None:
    for protocol in ("gym", "leaderboard"):
        env = AirlineEnv(user="scripted", protocol=protocol)
        env.reset(seed=0, options={"task": "17"})
        observation, *_ = env.step(say("hello"))
        assert (
            observation[0]["content"].startswith("Error: ")
            and "respond_to_user" in (observation[0]["content"])
        )


def test_the_async_path_plays_the_same_episode(tau2_tasks: Any) -> None:
    actions = [say("Which reservation?"), *[message(c) for c in gold_calls(tau2_tasks, "17")]]
    actions.append(message(call("done", "{}", "d")))

    def play_sync() -> list[Any]:
        env = AirlineEnv(user="scripted", protocol="tool-reply")
        env.reset(seed=3, options={"task": "17"})
        return [env.step(a)[:4] for a in actions] + [env.episode.transcript()]

    async def play_async() -> list[Any]:
        env = AirlineEnv(user="scripted", protocol="tool-reply")
        await env.areset(seed=3, options={"task": "17"})
        return [(await env.astep(a))[:4] for a in actions] + [env.episode.transcript()]

    assert play_sync() == asyncio.run(play_async())
