"""The scripted customer on generated tasks (``airline-gym generate``): the gold dialogue scores 1
on every one with a customer that agrees with it, the bare gold calls score 0 where they write
(nobody confirmed them), doing nothing scores 0 under strict grading, and random agents draw no
repeated or leaked customer turns."""

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


def test_the_gold_dialogue_scores_one_on_every_generated_task(generated: tuple[Path, list]) -> None:
    path, records = generated
    for record in records:
        result = play(path, record["id"], DialogueGoldAgent(str(path)))
        assert (result.reward, result.termination_reason) == (1.0, "user_stop"), record["id"]
        said = [str(m["content"]) for m in result.messages if m["role"] == "user"]
        assert not [s for s in said if s.startswith("No") and not s.startswith(BUDGET_NO)]
        assert audit_conversation(record["user_scenario"], result.messages) == []


def test_the_bare_gold_calls_fail_strict_grading_where_they_write(
    generated: tuple[Path, list],
) -> None:
    """No confirmation asked, no word to the customer: strict grading pays for what the agent
    did, and the gold's calls alone are not what the policy asks of an agent."""
    path, records = generated
    writing = [r for r in records if r["airline_gym"]["changes_db"]]
    assert writing
    for record in writing:
        result = play(path, record["id"], GoldAgent(str(path)))
        checks = {c["name"]: c["met"] for c in result.reward_info["strict_checks"]}
        assert result.reward == 0.0 and checks["CONFIRMED"] is False, record["id"]
        assert result.reward_info["db_match"] is True  # the DB is the gold's all the same


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


def test_the_gold_dialogue_scores_one_on_all_of_500_generated_tasks(tmp_path: Path) -> None:
    """gold-dialogue scores what the gold scores under the reference's evaluator (1) on every task
    of a 500-task file: every bin and combination, a question before a hand-off included."""
    records = generate(500, 505).records
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    env = gym.make("AirlineScripted-v0", tasks=str(path))
    try:
        failed = [
            r["id"]
            for r in records
            if run_episode(env, DialogueGoldAgent(str(path)), r["id"]).reward != 1.0
        ]
    finally:
        env.close()
    assert failed == []
    assert {"info", "cancel/flown"} <= {b for r in records for b in r["airline_gym"]["bins"]}
