"""The tau3 episode every adapter's benchmark test plays: task 7, graded differently in tau3.

tau3's task 7 differs from tau2's in what is graded: the gold actions of tau3's task 7 (plus the
sum it must tell the customer) score 1 in a tau3 env and 0 in a tau2 one, so an adapter that
silently played tau2's task, or tau2's env, fails. The customer is the LLM one behind a local
scripted server, so a test reads the system prompt the customer model was sent: it must start
with tau3's guidelines, read from the fetched tau3 file (never pasted here).
"""

from __future__ import annotations

from typing import Any

from scripted_policy import text

from airline_gym.agents import ScriptedAgent, text_message, tool_call_message
from airline_gym.domain.benchmarks import guidelines_path
from airline_gym.domain.tasks import load_task_set
from airline_gym.env import AirlineEnv
from airline_gym.harness.runner import EpisodeResult, run_episode
from airline_gym.testing.openai_server import OpenAIServer, Reply

TASK = "7"
OPENER = "Hi, I need help with my upcoming reservations."


def gold_messages() -> list[dict[str, Any]]:
    """tau3's gold actions for :data:`TASK`, the sum to tell, then ``done`` (assistant messages)."""
    task = load_task_set("tau3")[TASK]
    calls = [tool_call_message(a.name, a.arguments, f"g{i}") for i, a in enumerate(task.actions)]
    said = text_message("To confirm: " + ", ".join(task.communicate_info) + ".")
    return [*calls, said, tool_call_message("done", {}, "end")]


def customer_server() -> OpenAIServer:
    """The LLM customer's model: always the same plain reply (it never stops by itself)."""
    return OpenAIServer(default=Reply(OPENER))


def customer_kwargs(server: OpenAIServer) -> dict[str, Any]:
    """AirlineEnv's arguments for an LLM customer served by ``server``."""
    llm_args = {"api_base": server.base_url, "api_key": "sk-test", "num_retries": 0}
    return {"user": "llm", "user_model": "openai/customer", "user_llm_args": llm_args}


def assert_tau3_customer(requests: list[dict[str, Any]]) -> None:
    """Every customer request's system prompt starts with tau3's guidelines (not tau2's)."""
    tau3, tau2 = (guidelines_path(b).read_text() for b in ("tau3", "tau2"))
    systems = [body["messages"][0] for body in requests]
    assert systems and all(m["role"] == "system" for m in systems)
    texts = [text(m["content"]) for m in systems]
    assert all(t.startswith(tau3) for t in texts)
    assert not any(t.startswith(tau2) for t in texts)  # they differ (whitespace)


def in_process(
    messages: list[dict[str, Any]], seed: int | None = 0, benchmark: str = "tau3"
) -> EpisodeResult:
    """``messages`` played on :data:`TASK` in an in-process env of ``benchmark``."""
    env = AirlineEnv(user="scripted", benchmark=benchmark)
    return run_episode(env, ScriptedAgent(messages), TASK, seed)


def check_grades_differ() -> float:
    """tau3's grade of the gold messages (1.0), after checking tau2 grades them 0.0."""
    assert in_process(gold_messages(), benchmark="tau2").reward == 0.0
    reward = in_process(gold_messages()).reward
    assert reward == 1.0
    return reward
