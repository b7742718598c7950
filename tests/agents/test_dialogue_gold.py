"""The gold actions as a policy-following dialogue: same grade as ``gold``, a yes asked before
every write, refusals where the intent's request gets none, and a clean customer audit."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

from airline_gym.agents import GoldAgent
from airline_gym.agents.dialogue_gold import DialogueGoldAgent
from airline_gym.domain.prompts import STOP
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.domain.user_audit import audit_conversation
from airline_gym.harness.runner import EpisodeResult, run_episode
from tests.users.intent_tasks import TASKS, write_tasks


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tasks(tmp_path_factory.mktemp("dialogue") / "tasks.json")


def play(agent: object, task: str, tasks: str = "tau2", **kwargs: object) -> EpisodeResult:
    env = gym.make("AirlineScripted-v0", tasks=tasks, task=task, **kwargs)
    try:
        return run_episode(env, agent)
    finally:
        env.close()


def writes_follow_a_yes(messages: list[dict]) -> bool:
    """Every write call comes right after the customer said yes to a listed change."""
    for i, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            if call["function"]["name"] in WRITE_TOOLS - {"transfer_to_human_agents"}:
                asked, answer = messages[i - 2], messages[i - 1]
                if not (asked["role"] == "assistant" and "Shall I proceed?" in asked["content"]):
                    return False
                if not (answer["role"] == "user" and answer["content"].startswith("Yes")):
                    return False
    return True


@pytest.mark.parametrize("task", [t[0] for t in TASKS])
def test_intent_tasks_score_one_in_a_clean_dialogue(tasks_file: Path, task: str) -> None:
    result = play(DialogueGoldAgent(str(tasks_file)), task, str(tasks_file))
    assert result.reward == 1.0 and result.termination_reason == "user_stop"
    assert writes_follow_a_yes(result.messages)
    scenario = load_task_set(str(tasks_file))[task].raw["user_scenario"]
    assert audit_conversation(scenario, result.messages) == []


def test_a_refused_request_is_refused_again_after_the_push_back(tasks_file: Path) -> None:
    result = play(DialogueGoldAgent(str(tasks_file)), "insurance", str(tasks_file))
    said = [
        (m["role"], m["content"]) for m in result.messages if m["role"] in ("user", "assistant")
    ]
    texts = [t for _, t in said if t]
    refusal = next(i for i, t in enumerate(texts) if "insurance cannot be added" in t)
    assert "exception" in texts[refusal + 1]  # the customer pushes back once
    assert "not able to make an exception" in texts[refusal + 2]
    assert STOP in texts[refusal + 3]
    assert not any(m.get("tool_calls") for m in result.messages)


@pytest.mark.parametrize("task", [str(i) for i in range(0, 50, 7)])
def test_benchmark_tasks_score_what_gold_scores(task: str) -> None:
    gold = play(GoldAgent(), task)
    talk = play(DialogueGoldAgent(), task)
    assert talk.reward == gold.reward == 1.0
    assert writes_follow_a_yes(talk.messages)
