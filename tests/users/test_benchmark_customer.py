"""The scripted customer on the benchmark tasks whose request the solver lane wrote as an intent:
the gold calls played as a dialogue meet a customer that agrees with them (it objects only where
the intent's budget says no), stops on its own, and the grade is the gold's."""

from __future__ import annotations

import gymnasium as gym
import pytest

from airline_gym.agents.dialogue_gold import DialogueGoldAgent
from airline_gym.agents.scripted import NoOpAgent
from airline_gym.domain.prompts import STOP
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.domain.user_audit import audit_conversation
from airline_gym.harness.runner import EpisodeResult, run_episode
from airline_gym.taskgen.benchmark_intents import benchmark_intent, expressed_ids
from airline_gym.users import ScriptedUser

BUDGET_NO = "No, that's more than I'm willing to pay."


def play(agent: object, task: str, benchmark: str) -> EpisodeResult:
    env = gym.make("AirlineScripted-v0", task=task, benchmark=benchmark)
    try:
        return run_episode(env, agent)
    finally:
        env.close()


def check_dialogue(task: str, benchmark: str) -> None:
    result = play(DialogueGoldAgent(benchmark), task, benchmark)
    assert result.reward == 1.0 and result.termination_reason == "user_stop", task
    said = [str(m["content"]) for m in result.messages if m["role"] == "user"]
    objections = [s for s in said if s.startswith("No") and not s.startswith(BUDGET_NO)]
    assert not objections, (task, objections)
    assert STOP in said[-1] or "###TRANSFER###" in said[-1]
    scenario = load_task_set(benchmark)[task].raw["user_scenario"]
    kinds = {f["kind"] for f in audit_conversation(scenario, result.messages)}
    assert kinds <= {"leak"}, (task, kinds)  # tasks 8 and 25: see the docs' known limits


@pytest.mark.parametrize("task", expressed_ids("tau2"))
def test_tau2_encoded_tasks_play_out_with_the_intent_customer(task: str) -> None:
    check_dialogue(task, "tau2")


@pytest.mark.parametrize("task", expressed_ids("tau3"))
def test_tau3_encoded_tasks_play_out_with_the_intent_customer(tau3: None, task: str) -> None:
    check_dialogue(task, "tau3")


def test_the_customer_plays_the_intent_only_on_that_benchmark_task() -> None:
    user = ScriptedUser(benchmark="tau2")
    user.reset(load_task_set("tau2")["6"])
    assert user.player is not None and user.player.intent == benchmark_intent("6", "tau2")
    user.reset(load_task_set("tau2")["7"])  # tau3 changed task 7: no tau2 intent
    assert user.player is None


@pytest.mark.parametrize("task", [t for t in expressed_ids("tau2") if int(t) % 3 == 0])
def test_doing_nothing_scores_zero_where_the_gold_writes(task: str) -> None:
    gold = load_task_set("tau2")[task]
    if not any(a.name in WRITE_TOOLS - {"transfer_to_human_agents"} for a in gold.actions):
        pytest.skip("the gold leaves the DB unchanged")
    assert play(NoOpAgent(), task, "tau2").reward == 0.0
