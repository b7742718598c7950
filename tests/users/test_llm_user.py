"""The LLM customer over real HTTP: keyless local endpoints and honest costs."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401  (registers the envs)
from airline_gym.agents import LiteLLMAgent
from airline_gym.domain.tasks import load_task_set
from airline_gym.testing import OpenAIServer, Reply
from airline_gym.users import LLMUser

GREETING = [{"role": "assistant", "content": "Hi! How can I help you today?"}]


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "HOSTED_VLLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield


def test_customer_cost_is_none_when_the_provider_reports_none(no_key: None) -> None:
    task = load_task_set()["17"]
    with OpenAIServer(default=Reply("Hi, I'm omar_rossi_1241.")) as server:
        unpriced = LLMUser("openai/local-model", {"api_base": server.base_url})
        unpriced.reset(task, seed=1)
        assert unpriced.reply(GREETING) == "Hi, I'm omar_rossi_1241."
        assert unpriced.cost is None and unpriced.calls == 1
        priced = LLMUser("openai/gpt-4o-mini", {"api_base": server.base_url})
        priced.reset(task, seed=1)
        priced.reply(GREETING)
        assert priced.cost is not None and priced.cost > 0
        priced.reset(task, seed=2)
        assert priced.cost is None  # a new episode starts with nothing reported


def test_keyless_local_customer_and_agent_through_the_env(no_key: None) -> None:
    """``user_llm_args={"api_base": ...}`` and ``LiteLLMAgent(api_base=...)`` need no key."""
    customer = [Reply("Hi, I'm omar_rossi_1241."), Reply("Thanks! ###STOP###")]
    with OpenAIServer(customer) as users, OpenAIServer(default=Reply("Anything else?")) as llm:
        env = gym.make(
            "Airline-v0",
            task=17,
            user_model="openai/customer",
            user_llm_args={"api_base": users.base_url},
        )
        agent = LiteLLMAgent("openai/agent", api_base=llm.base_url)
        agent.check_ready()
        obs, info = env.reset(seed=0)
        agent.reset(info)
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
    assert info["termination_reason"] == "user_stop" and terminated
    assert len(users.requests) == 2 and len(llm.requests) == 1
