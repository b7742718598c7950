"""The verifiers MultiTurnEnv hooks, driven as verifiers' pre-0.4 loop did.

The driver below follows that loop: ``setup_state``, then model replies alternating with
``env_response`` until a stop condition fires, then the rubric scores the state.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import sys

import pytest

from airline_gym.agents import tool_call_message
from airline_gym.integrations.verifiers import AirlineVerifiersEnv
from airline_gym.integrations.verifiers import airline_reward as vf_reward
from airline_gym.integrations.verifiers import dataset_rows as vf_rows

# --- verifiers ---------------------------------------------------------------------------------


class ScriptedModel:
    """A chat model replying with fixed assistant messages, recording what it was sent."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def __call__(self, prompt, tools):
        self.prompts.append(copy.deepcopy(prompt))
        return self.replies.pop(0)


async def verifiers_rollout(env, row, model):
    """MultiTurnEnv.rollout + Rubric scoring, as verifiers runs them."""
    state = {
        "input": copy.deepcopy(row),
        "prompt": copy.deepcopy(row["prompt"]),
        "info": row["info"],
        "answer": row["answer"],
        "task": row["task"],
        "example_id": row["example_id"],
        "oai_tools": env.oai_tools,
        "trajectory": [],
        "is_completed": False,
        "reward": None,
    }
    state = await env.setup_state(state)
    while not await env.is_completed(state):
        if not state["trajectory"]:
            prompt = list(state["prompt"])
        else:
            last = state["trajectory"][-1]
            messages = list(last["prompt"]) + list(last["completion"])
            prompt = messages + await env.env_response(messages, state)
        reply = model(prompt, state["oai_tools"])
        state["trajectory"].append({"prompt": prompt, "completion": [reply]})
    state["reward"] = vf_reward(state=state, prompt=state["prompt"], completion=state["completion"])
    return state


def gold_replies(task):
    replies = [tool_call_message(a.name, a.arguments, f"g{i}") for i, a in enumerate(task.actions)]
    return [*replies, tool_call_message("done", {}, "end")]


def test_verifiers_gold_rollout_scores_1(tau2_tasks):
    env = AirlineVerifiersEnv(env_kwargs={"user": "scripted"})
    row = vf_rows(task_ids=["17"], seed=7)[0]
    model = ScriptedModel(gold_replies(tau2_tasks["17"]))
    state = asyncio.run(verifiers_rollout(env, row, model))
    assert state["reward"] == 1.0 and state["stop_condition"] == "airline_episode_over"
    assert state["airline_termination_reason"] == "agent_stop"
    assert state["airline_reward_info"]["db_match"] is True
    assert "airline" not in state  # the cleanup released the env
    # the model saw system, greeting and the customer first, then each tool result in turn
    first = model.prompts[0]
    assert [m["role"] for m in first] == ["system", "assistant", "user"]
    assert "Omar Rossi" in first[-1]["content"]
    second = model.prompts[1]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "g0"
    assert json.loads(second[-1]["content"])["reservation_id"] == "FQ8APE"
    assert state["completion"][-1]["tool_calls"][0]["function"]["name"] == "done"
    assert len(state["trajectory"]) == 4


def test_verifiers_wrong_and_unfinished_rollouts_score_0():
    env = AirlineVerifiersEnv(env_kwargs={"user": "scripted"})
    row = vf_rows(task_ids=["17"])[0]
    quitter = ScriptedModel([tool_call_message("done", {}, "end")])
    state = asyncio.run(verifiers_rollout(env, row, quitter))
    assert state["reward"] == 0.0 and state["airline_termination_reason"] == "agent_stop"
    assert state["stop_condition"] == "airline_episode_over"

    chatty = AirlineVerifiersEnv(env_kwargs={"user": "scripted"}, max_turns=2)
    reader = ScriptedModel([tool_call_message("list_all_airports", {}, f"r{i}") for i in range(3)])
    state = asyncio.run(verifiers_rollout(chatty, row, reader))
    assert state["stop_condition"] == "max_turns_reached" and state["reward"] == 0.0
    assert "airline_reward" not in state and "airline" not in state


def test_verifiers_customer_turns_and_hook_shapes():
    env = AirlineVerifiersEnv(env_kwargs={"user": "scripted"})
    row = vf_rows(task_ids=["3"])[0]
    talk = ScriptedModel([
        {"role": "assistant", "content": "You can check 4 bags."},
        tool_call_message("done", {}, "end"),
    ])  # fmt: skip
    state = asyncio.run(verifiers_rollout(env, row, talk))
    assert talk.prompts[1][-1]["role"] == "user"  # the customer's reply came from env_response
    assert state["reward"] == 1.0  # task 3 only needs the "4" said
    # the hooks have verifiers' shapes and markers
    for name in ("setup_state", "env_response", "airline_episode_over", "airline_cleanup"):
        assert inspect.iscoroutinefunction(getattr(env, name))
    assert env.airline_episode_over.stop and env.airline_episode_over.stop_priority == 100
    assert env.airline_cleanup.cleanup
    assert list(inspect.signature(env.env_response).parameters)[:2] == ["messages", "state"]
    rows = vf_rows(split="test", repeats=2)
    assert len(rows) == 40 and rows[-1]["example_id"] == 39 and rows[0]["task"] == "airline"


def test_load_environment_says_what_to_install(monkeypatch):
    """Without verifiers, or with 0.4's v1-only API, one clear error names the supported release."""
    import types

    from airline_gym.errors import ConfigError
    from airline_gym.integrations import verifiers as adapter

    monkeypatch.setitem(sys.modules, "verifiers", None)  # import verifiers -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'verifiers==0\.1\.10'"):
        adapter.load_environment()
    v1_only = types.SimpleNamespace(__version__="0.4.0", v1=types.SimpleNamespace())
    monkeypatch.setitem(sys.modules, "verifiers", v1_only)
    with pytest.raises(ConfigError, match=r"verifiers 0\.4\.0 has only verifiers\.v1"):
        adapter.load_environment()
