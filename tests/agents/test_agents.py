"""Ready-made agents, above all LiteLLMAgent against a real local OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

from airline_gym.agents import (
    DONE,
    AgentError,
    GoldAgent,
    LiteLLMAgent,
    NoOpAgent,
    RandomAgent,
    TransferAgent,
)
from airline_gym.env import AirlineEnv
from airline_gym.testing import OpenAIServer, Reply

USER_ID = "omar_rossi_1241"  # task 17's customer


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


def make_agent(server: OpenAIServer, model: str = "openai/agent", **kw: Any) -> LiteLLMAgent:
    kw.setdefault("timeout", 5)
    return LiteLLMAgent(model, api_base=server.base_url, api_key="sk-test", **kw)


def play(env: AirlineEnv, agent: Any, task: str = "17") -> tuple[float, dict[str, Any]]:
    obs, info = env.reset(seed=0, options={"task": task})
    agent.reset(info)
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        if terminated or truncated:
            return reward, info


def test_llm_agent_sends_prompt_history_and_tools_and_returns_openai_dicts(server):
    server.push(
        Reply(tool_calls=[{"name": "get_user_details", "arguments": {"user_id": USER_ID}}]),
        Reply("Could you tell me the reservation id?"),
        Reply(tool_calls=[{"name": "done", "arguments": {}}]),
    )
    env = AirlineEnv(user="scripted")
    agent = make_agent(server)
    obs, info = env.reset(seed=0, options={"task": "17"})
    agent.reset(info)
    action = agent.act(obs, info)
    assert action["role"] == "assistant" and action["content"] is None
    (call,) = action["tool_calls"]
    assert call["function"]["name"] == "get_user_details"
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == {"user_id": USER_ID}
    request = server.requests[0]
    assert request["messages"][0] == {"role": "system", "content": info["system_prompt"]}
    assert request["messages"][1:] == info["messages"][1:]
    names = [t["function"]["name"] for t in request["tools"]]
    assert len(names) == 15 and "done" in names and "book_reservation" in names
    assert request["temperature"] == 0.0

    obs, *_, info = env.step(action)
    assert USER_ID in obs[0]["content"]  # the tool ran
    text = agent.act(obs, info)
    assert text == {"role": "assistant", "content": "Could you tell me the reservation id?"}
    obs, *_, info = env.step(text)
    assert obs[-1]["role"] == "user" and not info["termination_reason"]
    # The second request carried the tool call and its result, as the env recorded them.
    assert server.requests[1]["messages"][-2]["tool_calls"][0]["id"] == call["id"]
    assert server.requests[1]["messages"][-1]["role"] == "tool"
    obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
    assert terminated and info["termination_reason"] == "agent_stop"
    assert agent.calls == 3


def test_llm_failure_after_retries_raises_agent_error_with_the_cause(server):
    server.push(Reply(fault="500"), Reply(fault="500"), Reply("too late"))
    agent = make_agent(server, max_retries=1, llm_args={"backoff": 0.01})
    info = {"messages": [{"role": "system", "content": "x"}], "tools": []}
    with pytest.raises(AgentError) as caught:
        agent.act([], info)
    assert "HTTP 500" in caught.value.cause and "2 attempts" in caught.value.cause
    assert len(server.requests) == 2  # max_retries=1: two requests, no more
    assert isinstance(caught.value, RuntimeError)


def test_garbage_tool_arguments_are_retried_then_become_an_agent_error(server):
    server.default = Reply(fault="bad_json")
    agent = make_agent(server, max_retries=2, llm_args={"backoff": 0.0})
    with pytest.raises(AgentError, match="not valid JSON"):
        agent.act([], {"messages": [{"role": "user", "content": "hi"}], "tools": []})
    assert len(server.requests) == 3


def test_the_agent_needs_the_info_dict():
    agent = LiteLLMAgent("openai/agent", api_base="http://127.0.0.1:9", api_key="k")
    with pytest.raises(AgentError, match="info dict"):
        agent.act([], {})


def test_usage_and_cost_are_tracked_per_episode_and_reset(server):
    # gpt-4.1 is priced in litellm's bundled cost map, so a cost is reported for it.
    server.push(Reply("one"), Reply("two"), Reply("three"))
    agent = make_agent(server, model="openai/gpt-4.1")
    info = {"messages": [{"role": "user", "content": "hello there"}], "tools": []}
    agent.reset(info)
    agent.act([], info)
    first = dict(agent.usage)
    assert agent.last_usage is not None and agent.last_usage["completion_tokens"] == 1
    assert agent.cost is not None and agent.cost > 0 and agent.last_cost == agent.cost
    agent.act([], info)
    assert agent.usage["prompt_tokens"] == 2 * first["prompt_tokens"]
    assert agent.calls == 2
    agent.reset(info)
    assert (agent.cost, agent.usage, agent.calls, agent.last_cost) == (None, {}, 0, None)
    agent.act([], info)
    assert agent.usage == first


def test_cost_stays_none_when_the_provider_reports_none(server):
    server.push(Reply("hi"))
    agent = make_agent(server, model="openai/some-local-model")
    agent.act([], {"messages": [{"role": "user", "content": "x"}], "tools": []})
    assert agent.cost is None and agent.usage["prompt_tokens"] > 0


def test_llm_args_set_model_fields_and_reach_the_request(server):
    server.push(Reply("ok"))
    agent = make_agent(
        server, seed=7, temperature=0.5, llm_args={"max_tokens": 64, "backoff": 0.25}
    )
    assert agent.chat_model.backoff == 0.25 and agent.chat_model.extra == {"max_tokens": 64}
    agent.act([], {"messages": [{"role": "user", "content": "x"}], "tools": []})
    body = server.requests[0]
    assert (body["max_tokens"], body["seed"], body["temperature"]) == (64, 7, 0.5)
    with pytest.raises(ValueError, match="must not set"):
        LiteLLMAgent("openai/x", llm_args={"extra": {"messages": []}})


def test_pickled_agent_still_works(server):
    server.push(Reply("before"), Reply("after"))
    agent = make_agent(server)
    info = {"messages": [{"role": "user", "content": "x"}], "tools": []}
    agent.act([], info)
    clone = pickle.loads(pickle.dumps(agent))
    assert clone.chat_model == agent.chat_model and clone.calls == 1
    assert clone.act([], info)["content"] == "after"
    error = pickle.loads(pickle.dumps(AgentError("boom")))
    assert isinstance(error, AgentError) and error.cause == "boom"


def test_async_act_uses_the_async_client(server):
    server.push(Reply(tool_calls=[{"name": "done", "arguments": {}}]), Reply(fault="401"))
    agent = make_agent(server)
    info = {"messages": [{"role": "user", "content": "x"}], "tools": []}
    action = asyncio.run(agent.aact([], info))
    assert action["tool_calls"][0]["function"]["name"] == "done"
    with pytest.raises(AgentError, match="HTTP 401"):
        asyncio.run(agent.aact([], info))


def test_check_ready_names_the_missing_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AgentError, match="OPENAI_API_KEY"):
        LiteLLMAgent("gpt-4.1").check_ready()
    LiteLLMAgent("openai/local", api_base="http://127.0.0.1:9").check_ready()  # local: fine


def test_llm_agent_plays_a_whole_episode_to_a_passing_grade(server):
    # Task 0 expects no change and nothing said: look the customer up, then stop.
    def respond(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(tool_calls=[{"name": "done", "arguments": {}}])
        return Reply(tool_calls=[{"name": "get_user_details", "arguments": {"user_id": "x"}}])

    with OpenAIServer(respond) as srv:
        reward, info = play(AirlineEnv(user="scripted"), make_agent(srv), task="0")
    assert reward == 1.0 and info["num_errors"] == 1  # user "x" does not exist: a tool error


# --- the built-in agents keep their behaviour ----------------------------------------------
def test_builtin_agents(tau2_tasks):
    env = AirlineEnv(user="scripted")
    assert play(env, GoldAgent(tau2_tasks))[0] == 1.0
    reward, info = play(env, NoOpAgent())
    assert reward == 0.0 and info["termination_reason"] == "agent_stop"
    noop = NoOpAgent()
    noop.reset({})
    assert noop.act([], {}) == DONE
    transfer = TransferAgent()
    transfer.reset({})
    first = transfer.act([], {})
    assert first["tool_calls"][0]["function"]["name"] == "transfer_to_human_agents"
    random_actions = [RandomAgent(seed=3).act([], {}) for _ in range(2)]
    assert random_actions[0] == random_actions[1]
