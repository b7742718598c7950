"""The SkyRL text env with the real skyrl-gym: ``skyrl_gym.make("airline_gym", ...)`` played from
raw model text, as SkyRL's generator drives it (``init`` then ``step(text)`` until ``done``).

The same replies parsed and played in process with the one episode runner give the grades the
env must report through SkyRL.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from extras import lazy, require

from airline_gym.agents import ScriptedAgent
from airline_gym.env import AirlineEnv
from airline_gym.harness.runner import run_episode
from airline_gym.integrations.tool_text import parse_reply

sys.path.insert(0, str(Path(__file__).parent))
from readme_examples import run_example

require("skyrl_gym")
skyrl_gym = lazy("skyrl_gym")
adapter = lazy("airline_gym.integrations.skyrl")

DONE = '<tool_call>{"name": "done", "arguments": {}}</tool_call>'


def block(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def make(task_id: str, seed: int = 0, **config: Any) -> Any:
    row = adapter.dataset_rows(task_ids=[task_id], seed=seed)[0]
    env = skyrl_gym.make("airline_gym", env_config={"user": "scripted", **config}, extras=row)
    return env, row


def play(env: Any, prompt: Any, replies: list[str]) -> tuple[list[Any], list[Any]]:
    """SkyRL's generator loop: init, then one step per reply until done."""
    history, metadata = env.init(prompt)
    outputs = []
    for text in replies:
        outputs.append(env.step(text))
        if outputs[-1]["done"]:
            break
    return history, outputs


def in_process(task_id: str, seed: int, replies: list[str]) -> Any:
    actions = [parse_reply(text) for text in replies]
    return run_episode(AirlineEnv(user="scripted"), ScriptedAgent(actions), task_id, seed)


def test_readme_example_plays_the_gold_episode_from_raw_text(tau3):
    namespace = run_example("skyrl")
    out, env = namespace["out"], namespace["env"]
    assert namespace["row"]["extra_info"]["benchmark"] == env.env.benchmark == "tau3"
    assert out["done"] and out["reward"] == 1.0
    assert env.get_metrics()["terminated_agent_stop"] == 1.0


def test_gold_episode_scores_one_with_several_calls_per_reply(tau2_tasks):
    gold = [block(a.name, a.arguments) for a in tau2_tasks["17"].actions]
    assert len(gold) >= 3
    # a word to the customer, then two calls in one reply (with reasoning), then one per reply
    replies = [
        "Sure, let me look into that.",
        f"<think>look up first</think>{gold[0]}\n{gold[1]}",
        *gold[2:],
        DONE,
    ]
    env, row = make("17", seed=3)
    history, outputs = play(env, row["prompt"], replies)

    expected = in_process("17", 3, replies)
    assert (
        history[0]["role"] == "system" and history[0]["content"] == expected.messages[0]["content"]
    )
    assert [m["role"] for m in history[1:]] == ["assistant", "user"]  # the customer opens
    assert [o["reward"] for o in outputs] == [0.0] * (len(outputs) - 1) + [1.0]
    assert expected.reward == 1.0 and [o["done"] for o in outputs][-1]
    # the word to the customer came back as the customer's turn; two calls, two tool results
    assert [m["role"] for m in outputs[0]["observations"]] == ["user"]
    assert outputs[0]["observations"][0]["content"] == expected.messages[4]["content"]
    assert [m["role"] for m in outputs[1]["observations"]] == ["tool", "tool"]
    assert outputs[-1]["metadata"]["reward_info"] == expected.reward_info
    metrics = env.get_metrics()
    assert metrics["steps"] == expected.steps and metrics["tool_errors"] == 0
    assert metrics["tool_calls"] == len(gold) + 1  # the gold calls and done
    assert metrics["termination_reason"] == "agent_stop" == expected.termination_reason
    # the transcript the env recorded: the two calls of one reply are one assistant message
    assistant = [m for m in expected.messages if m["role"] == "assistant"][1:]
    assert [len(m.get("tool_calls") or []) for m in assistant[:2]] == [0, 2]


def test_wrong_episode_scores_zero_and_counts_the_errors():
    replies = [
        block("get_reservation_details", {"reservation_id": "NOPE00"}),
        block("cancel_reservation", {"reservation_id": "JMO1MG"}),
        "<tool_call>{not json</tool_call>",
        DONE,
    ]
    env, row = make("3", seed=1)
    _, outputs = play(env, row["prompt"], replies)
    expected = in_process("3", 1, replies)
    assert outputs[-1]["done"] and outputs[-1]["reward"] == expected.reward == 0.0
    assert outputs[0]["observations"][0]["content"].startswith("Error:")
    unreadable = outputs[2]["observations"]
    assert [m["role"] for m in unreadable] == ["tool"] and "Error" in unreadable[0]["content"]
    assert outputs[-1]["metadata"]["reward_info"] == expected.reward_info
    metrics = env.get_metrics()
    assert metrics["tool_errors"] == expected.num_errors == 2
    assert metrics["terminated_agent_stop"] == 1.0


def test_max_turns_ends_the_episode_as_max_steps():
    row = adapter.dataset_rows(task_ids=["17"])[0]
    extras = {**row, "max_turns": 2}  # SkyRL's generator adds generator.max_turns
    env = skyrl_gym.make("airline_gym", env_config={"user": "scripted"}, extras=extras)
    lookup = block("list_all_airports", {})
    _, outputs = play(env, row["prompt"], [lookup, lookup, lookup])
    assert len(outputs) == 2 and outputs[-1]["done"] and outputs[-1]["reward"] == 0.0
    assert env.get_metrics()["termination_reason"] == "max_steps"


def test_empty_reply_is_an_error_turn_not_an_exception():
    env, row = make("17")
    env.init(row["prompt"])
    out = env.step("<think>nothing to say</think>")
    assert not out["done"] and out["reward"] == 0.0
    assert [m["role"] for m in out["observations"]] == ["user"]
    assert out["observations"][0]["content"].startswith("Error: invalid action")


def test_bad_config_is_a_clear_error():
    row = adapter.dataset_rows(task_ids=["17"])[0]
    try:
        skyrl_gym.make("airline_gym", env_config={"usr": "scripted"}, extras=row)
    except Exception as exc:
        assert "usr" in str(exc)
    else:
        raise AssertionError("an unknown env_config key was accepted")


# --- benchmark versions ---------------------------------------------------------------------------
def as_text(message: dict[str, Any]) -> str:
    """An assistant message as the model's raw reply (tool calls as Qwen writes them)."""
    calls = message.get("tool_calls") or []
    blocks = [block(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]
    return "\n".join(blocks) or str(message["content"])


def test_tau3_rows_play_tau3_tasks_with_tau3_s_customer(tau3):
    import tau3_case as case

    with case.customer_server() as server:
        (row,) = adapter.dataset_rows(task_ids=[case.TASK], seed=2, benchmark="tau3")
        assert row["extra_info"] == {"task_id": case.TASK, "seed": 2, "benchmark": "tau3"}
        config = {"benchmark": "tau3", **case.customer_kwargs(server)}
        env = skyrl_gym.make("airline_gym", env_config=config, extras=row)
        history, outputs = play(env, row["prompt"], [as_text(m) for m in case.gold_messages()])
    assert history[-1] == {"role": "user", "content": case.OPENER}
    assert outputs[-1]["done"] and outputs[-1]["reward"] == case.check_grades_differ() == 1.0
    assert env.get_metrics()["termination_reason"] == "agent_stop"
    case.assert_tau3_customer(server.requests)


def test_a_row_of_one_benchmark_is_refused_by_an_env_of_the_other(tau3):
    from airline_gym.errors import ConfigError

    for row_version, env_version in (("tau3", "tau2"), ("tau2", "tau3")):
        (row,) = adapter.dataset_rows(task_ids=["7"], benchmark=row_version)
        config = {"user": "scripted", "benchmark": env_version}
        with pytest.raises(ConfigError, match=f"listed for benchmark '{row_version}' but the env"):
            skyrl_gym.make("airline_gym", env_config=config, extras=row)


def test_a_bad_benchmark_is_refused_as_the_env_refuses_it():
    from airline_gym.errors import ConfigError

    (row,) = adapter.dataset_rows(task_ids=["7"])
    said = "benchmark must be one of tau2, tau3; got 'tau4'"
    for call in (
        lambda: adapter.dataset_rows(benchmark="tau4"),
        lambda: skyrl_gym.make(
            "airline_gym", env_config={"user": "scripted", "benchmark": "tau4"}, extras=row
        ),
        lambda: skyrl_gym.make(
            "airline_gym",
            env_config={"user": "scripted"},
            extras={**row, "extra_info": {**row["extra_info"], "benchmark": "tau4"}},
        ),
    ):
        with pytest.raises(ConfigError) as refused:
            call()
        assert str(refused.value) == said


def test_the_tool_reply_protocol_reaches_the_customer_through_respond_to_user(tau2_tasks):
    """``env_config.protocol: tool-reply`` (TRL's): the customer's replies are the results of
    ``respond_to_user``; a reply without a tool call would end the episode."""
    gold = [block(a.name, a.arguments) for a in tau2_tasks["17"].actions]
    replies = [block("respond_to_user", {"message": "Sure, let me look."}), *gold, DONE]
    env, row = make("17", seed=3, protocol="tool-reply")
    history, outputs = play(env, row["prompt"], replies)
    assert history[0]["content"].endswith("call the done tool.")  # the protocol's prompt
    names = [t["function"]["name"] for t in env.init(row["prompt"])[1]["tools"]]
    assert "respond_to_user" in names and "done" in names
    first = outputs[0]["observations"]
    assert [m["role"] for m in first] == ["tool"] and "change the cabin" in first[0]["content"]
    assert outputs[-1]["done"] and outputs[-1]["reward"] == 1.0
    text_only, row = make("17", seed=3, protocol="tool-reply")
    _, ended = play(text_only, row["prompt"], ["Hello, how can I help?"])
    assert ended[-1]["done"] and ended[-1]["reward"] == 0.0
    assert text_only.get_metrics()["termination_reason"] == "no_tool_call"
