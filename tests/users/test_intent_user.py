"""The scripted customer playing a task's intent, through the env: it answers from its known
info, never offers its unknown info, says no to what it did not ask for, pushes back exactly
``insist`` times, stops when its requests are settled; gold scores 1 and doing nothing 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from airline_gym.agents import GoldAgent
from airline_gym.agents.base import text_message, tool_call_message
from airline_gym.agents.scripted import NoOpAgent, RandomAgent, ScriptedAgent
from airline_gym.domain.prompts import STOP, TRANSFER
from airline_gym.domain.said import LEAVE_UNSATISFIED
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.user_audit import audit_conversation
from airline_gym.harness.runner import EpisodeResult, run_episode
from tests.users.intent_tasks import DB_CHANGING, TASKS, write_tasks

HANDOFF = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tasks(tmp_path_factory.mktemp("intent") / "tasks.json")


def play(tasks_file: Path, task: str, agent: Any, seed: int | None = None) -> EpisodeResult:
    env = gym.make("AirlineScripted-v0", tasks=str(tasks_file), task=task)
    try:
        return run_episode(env, agent, seed=seed)
    finally:
        env.close()


def talk(tasks_file: Path, task: str, *texts: str) -> list[str]:
    """The customer's replies to the agent's ``texts`` (its opening first)."""
    result = play(tasks_file, task, ScriptedAgent([text_message(t) for t in texts]))
    return [str(m["content"]) for m in result.messages if m["role"] == "user"]


@pytest.mark.parametrize("task", [t[0] for t in TASKS])
def test_gold_scores_one_with_the_intent_customer(tasks_file: Path, task: str) -> None:
    result = play(tasks_file, task, GoldAgent(str(tasks_file)))
    assert result.reward == 1.0


@pytest.mark.parametrize("task", DB_CHANGING)
def test_doing_nothing_scores_zero_where_the_db_changes(tasks_file: Path, task: str) -> None:
    assert play(tasks_file, task, NoOpAgent()).reward == 0.0


def test_opening_states_the_first_request_and_who_is_calling(tasks_file: Path) -> None:
    opening = talk(tasks_file, "bags_then_cancel")[0]
    assert "add checked bags" in opening and "PGAGLM" in opening
    assert "isabella_muller_2311" in opening and "cancel" not in opening


def test_it_says_no_to_a_change_it_did_not_ask_for(tasks_file: Path) -> None:
    replies = talk(
        tasks_file,
        "cancel",
        "I can upgrade reservation PGAGLM to a later flight instead. Shall I proceed?",
        "I will cancel reservation PGAGLM. Shall I proceed?",
    )
    assert replies[1].startswith("No") and "cancel my reservation PGAGLM" in replies[1]
    assert replies[2].startswith("Yes")
    insurance = talk(tasks_file, "cancel", "Would you like me to add travel insurance to PGAGLM?")
    assert insurance[1].startswith("No") and "insurance" in insurance[1]


def test_after_two_proposals_that_miss_it_leaves_unsatisfied(tasks_file: Path) -> None:
    replies = talk(
        tasks_file,
        "cancel",
        "I can upgrade reservation PGAGLM to business. Shall I proceed?",
        "Would you like me to add travel insurance to PGAGLM?",
        "I will cancel reservation PGAGLM. Shall I proceed?",
    )
    assert replies[1].startswith("No") and STOP not in replies[1]
    assert replies[2].startswith(LEAVE_UNSATISFIED[2]) and STOP in replies[2]
    assert len(replies) == 3  # the right proposal came too late


def test_it_says_no_to_another_payment_method(tasks_file: Path) -> None:
    replies = talk(
        tasks_file,
        "bags_then_cancel",
        "I'll add 2 bags to PGAGLM, paid with credit_card_2655640. Shall I proceed?",
        "I'll add 2 bags to PGAGLM, paid with gift_card_4033665. Shall I proceed?",
    )
    assert replies[1].startswith("No") and "gift_card_4033665" in replies[1]
    assert replies[2].startswith("Yes")


def test_it_answers_from_known_info_and_moves_through_its_requests(tasks_file: Path) -> None:
    bags = {
        "reservation_id": "PGAGLM",
        "total_baggages": 3,
        "nonfree_baggages": 0,
        "payment_id": "gift_card_4033665",
    }
    result = play(
        tasks_file,
        "bags_then_cancel",
        ScriptedAgent(
            [
                text_message("Could you give me your user id and reservation id?"),
                text_message("How would you like to pay for the bags?"),
                text_message("I'll set PGAGLM to 3 checked bags on gift_card_4033665. OK?"),
                tool_call_message("update_reservation_baggages", bags, "b"),
                text_message("Your reservation PGAGLM has been updated with 3 checked bags."),
                text_message("Why do you want to cancel?"),
                text_message("I'll cancel reservation PGAGLM. Shall I?"),
                tool_call_message("cancel_reservation", {"reservation_id": "PGAGLM"}, "c"),
                text_message("Reservation PGAGLM has been cancelled."),
            ]
        ),
    )
    replies = [str(m["content"]) for m in result.messages if m["role"] == "user"]
    assert "isabella_muller_2311" in replies[1] and "PGAGLM" in replies[1]
    assert "gift_card_4033665" in replies[2]
    assert replies[3].startswith("Yes")
    assert "cancel" in replies[4] and STOP not in replies[4]  # its account shows the bags
    assert "plans have changed" in replies[5]
    assert replies[6].startswith("Yes")
    assert STOP in replies[7] and STOP not in " ".join(replies[:7])
    assert result.reward == 1.0


def test_it_never_offers_its_unknown_info(tasks_file: Path) -> None:
    replies = talk(
        tasks_file,
        "forgetful",
        "What is your reservation id and your date of birth?",
        "Is it reservation PGAGLM, from LAX to ATL?",
    )
    assert "PGAGLM" not in replies[0] + replies[1] and "1990-01-01" not in " ".join(replies)
    assert "don't remember" in replies[1]
    assert "PGAGLM is the one" in replies[2]  # the agent named it: the customer recognises it


@pytest.mark.parametrize("seed", range(6))
def test_random_agents_never_draw_out_unknown_info(tasks_file: Path, seed: int) -> None:
    result = play(tasks_file, "forgetful", RandomAgent(seed), seed=seed)
    said = ""
    for message in result.messages:
        if message["role"] == "assistant":
            said += str(message.get("content") or "")
        elif message["role"] == "user":
            text = str(message["content"])
            assert "1990-01-01" not in text
            assert "PGAGLM" not in text or "PGAGLM" in said


def test_it_pushes_back_exactly_insist_times_then_accepts(tasks_file: Path) -> None:
    no = "Unfortunately, I cannot add insurance to an existing reservation."
    replies = talk(tasks_file, "insurance", no, no, no)
    assert STOP not in replies[1] and "exception" in replies[1]  # insist = 1: once
    assert STOP in replies[2] and "understand" in replies[2]
    assert len(replies) == 3  # it stopped: the third refusal never reached it


def test_without_insisting_it_accepts_at_once(tasks_file: Path) -> None:
    replies = talk(tasks_file, "cancel", "I'm sorry, but this reservation is not eligible.")
    assert STOP in replies[1]


def test_it_ends_on_a_transfer(tasks_file: Path) -> None:
    assert talk(tasks_file, "cancel", HANDOFF)[1] == TRANSFER


def test_it_gives_up_on_an_agent_that_stalls(tasks_file: Path) -> None:
    replies = talk(tasks_file, "cancel", "Hmm.", "Let me think.", "One moment.", "Still here.")
    assert STOP not in replies[1] + replies[2] and STOP in replies[3]
    assert replies[3].startswith(LEAVE_UNSATISFIED[0])
    assert len(replies) == 4


@pytest.mark.parametrize("seed", range(4))
def test_random_agent_runs_raise_no_repeat_flags(tasks_file: Path, seed: int) -> None:
    scenario = {t.id: t.raw["user_scenario"] for t in load_task_set(str(tasks_file))}
    for task, *_ in TASKS:
        result = play(tasks_file, task, RandomAgent(seed), seed=seed)
        flags = audit_conversation(scenario[task], result.messages)
        assert not [f for f in flags if f["kind"] == "empty_or_repeated"], flags
