"""The scripted customer on generated tasks (``airline-gym generate``): the gold scores 1 on every
one, the gold dialogue plays each with a customer that agrees with it, doing nothing scores 0
under strict grading, and random agents draw no repeated or leaked customer turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from airline_gym.agents import GoldAgent
from airline_gym.agents.dialogue_gold import DialogueGoldAgent
from airline_gym.agents.scripted import NoOpAgent, RandomAgent
from airline_gym.domain.user_audit import audit_conversation
from airline_gym.harness.runner import EpisodeResult, run_episode

#: Generating leaves out the benchmarks' entities: it reads tau3's task file.
pytestmark = pytest.mark.usefixtures("tau3_for_module")

generate = pytest.importorskip("airline_gym.taskgen.generate").generate

BUDGET_NO = "No, that's more than I'm willing to pay."


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    records = generate(60, 11).records
    path = tmp_path_factory.mktemp("generated") / "tasks.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path, records


def play(path: Path, task: str, agent: Any, seed: int | None = None) -> EpisodeResult:
    env = gym.make("AirlineScripted-v0", tasks=str(path), task=task)
    try:
        return run_episode(env, agent, seed=seed)
    finally:
        env.close()


def transfer_first(record: dict[str, Any]) -> bool:
    """A transfer before another request: the call ends at the transfer, the rest unasked."""
    outcomes = record["airline_gym"]["outcomes"]
    return "transfer" in outcomes[:-1]


def test_gold_scores_one_on_every_generated_task(generated: tuple[Path, list]) -> None:
    path, records = generated
    assert all(play(path, r["id"], GoldAgent(str(path))).reward == 1.0 for r in records)


def test_the_gold_dialogue_meets_a_customer_that_agrees(generated: tuple[Path, list]) -> None:
    path, records = generated
    for record in records:
        if transfer_first(record):
            continue
        result = play(path, record["id"], DialogueGoldAgent(str(path)))
        assert (result.reward, result.termination_reason) == (1.0, "user_stop"), record["id"]
        said = [str(m["content"]) for m in result.messages if m["role"] == "user"]
        assert not [s for s in said if s.startswith("No") and not s.startswith(BUDGET_NO)]
        assert audit_conversation(record["user_scenario"], result.messages) == []


def test_doing_nothing_scores_zero_under_strict_grading(generated: tuple[Path, list]) -> None:
    path, records = generated
    strict = [r for r in records if r["airline_gym"]["grading"] == "strict"]
    assert strict and all(play(path, r["id"], NoOpAgent()).reward == 0.0 for r in strict)


@pytest.mark.parametrize("seed", range(2))
def test_random_agents_draw_no_repeats_or_leaks(generated: tuple[Path, list], seed: int) -> None:
    path, records = generated
    for record in records[:30]:
        result = play(path, record["id"], RandomAgent(seed), seed=seed)
        flags = audit_conversation(record["user_scenario"], result.messages)
        assert not [f for f in flags if f["kind"] in ("empty_or_repeated", "leak")], flags
