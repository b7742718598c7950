"""The end of an episode: ``done`` ends the conversation where it stands (the calls after it
in the same message are dropped: neither run nor recorded), ``step()`` after the end raises
Gymnasium's ``ResetNeeded``, and ``render`` shows a malformed call as malformed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import gymnasium as gym
import pytest

from airline_gym.domain.transcript import tool_calls
from airline_gym.env import AirlineEnv
from airline_gym.harness.replay import regrade_simulation
from airline_gym.wrappers import CandidateActionWrapper

RESERVATION = "EHGLP3"  # task 3's customer's (tests/env/test_stories.py cancels it too)


def calls(*named: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(named)
        ],
    }


DONE = ("done", {})
CANCEL = ("cancel_reservation", {"reservation_id": RESERVATION})


def status(env: AirlineEnv) -> str:
    assert env.episode is not None
    record = env.episode.db.reservation(RESERVATION)
    assert record is not None
    return str(record.get("status", "active"))


def test_calls_after_done_in_the_same_message_are_dropped_not_run() -> None:
    env = AirlineEnv(task=3, user="scripted")
    env.reset(seed=0)
    before = status(env)
    observation, reward, terminated, truncated, info = env.step(calls(DONE, CANCEL))
    assert (terminated, truncated, info["termination_reason"]) == (True, False, "agent_stop")
    assert observation == [
        {"role": "tool", "tool_call_id": "c0", "content": "Conversation ended by the agent."}
    ]
    assert status(env) == before != "cancelled"  # the cancellation did not happen
    assert info["num_errors"] == 0 and info["step_count"] == 2  # no tool step ran
    assert env.episode is not None
    recorded = env.episode.transcript()
    assert [c.name for c in tool_calls(recorded)] == ["done"]  # what ran is what is recorded
    # so a re-grade, which replays the recorded calls, agrees with the episode's grade
    sim = {
        "messages": recorded,
        "termination_reason": "agent_stop",
        "reward_info": {"reward": reward},
    }
    again = regrade_simulation(sim, env.task_set["3"])
    assert (again.reward, again.db_match) == (reward, info["reward_info"]["db_match"])


def test_calls_before_done_run() -> None:
    env = AirlineEnv(task=3, user="scripted")
    env.reset(seed=0)
    observation, _, terminated, _, info = env.step(calls(CANCEL, DONE))
    assert terminated and status(env) == "cancelled"
    assert observation[1]["content"] == "Conversation ended by the agent."
    assert info["step_count"] == 3  # the agent's message and the tool step


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_step_after_the_end_raises_resetneeded_naming_reset(mode: str) -> None:
    env = AirlineEnv(task=3, user="scripted")
    env.reset(seed=0)
    env.step(calls(DONE))
    with pytest.raises(gym.error.ResetNeeded, match=r"ended \(agent_stop\); call reset\(\)"):
        if mode == "sync":
            env.step(calls(CANCEL))
        else:
            asyncio.run(env.astep(calls(CANCEL)))
    assert status(env) != "cancelled"  # nothing ran
    observation, _ = env.reset(seed=0)  # and reset starts another
    assert observation[-1]["role"] == "user"


def test_step_before_reset_is_resetneeded_too_and_still_a_runtimeerror() -> None:
    env = AirlineEnv(task=3, user="scripted")
    with pytest.raises(gym.error.ResetNeeded, match=r"before reset\(\)") as info:
        env.step(calls(DONE))
    assert isinstance(info.value, RuntimeError)


def test_the_candidate_wrapper_refuses_a_step_after_the_end_as_the_env() -> None:
    env = CandidateActionWrapper(AirlineEnv(task=3, user="scripted"), max_actions=1)
    env.reset(seed=0)
    _, _, terminated, truncated, _ = env.step(0)
    assert terminated or truncated
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        env.step(0)


@pytest.mark.parametrize(
    ("action", "shown"),
    [
        ("get_user_details(user_id=", "-> get_user_details(?) MALFORMED, not run: could not parse"),
        (
            calls(("get_user_details", {}))
            | {"tool_calls": [{"id": "x", "function": {"name": "get_user_details",
                                                       "arguments": '{"user_id": '}}]},
            '-> get_user_details({"user_id": ) MALFORMED: the arguments are not a JSON object',
        ),
    ],
    ids=["tau2-gym string", "openai arguments"],
)  # fmt: skip
def test_render_shows_a_malformed_call_as_malformed(action: Any, shown: str) -> None:
    env = AirlineEnv(task=3, user="scripted", render_mode="ansi")
    env.reset(seed=0)
    observation, *_ = env.step(action)
    assert observation[0]["content"].startswith("Error: ")
    text = env.render()
    assert text is not None
    line = next(ln for ln in text.splitlines() if "-> get_user_details" in ln)
    assert shown in line, line


def test_render_shows_a_well_formed_call_as_called() -> None:
    env = AirlineEnv(task=3, user="scripted", render_mode="ansi")
    env.reset(seed=0)
    env.step("get_user_details(user_id='mia_li_3668')")
    text = env.render()
    assert text is not None and '-> get_user_details(user_id="mia_li_3668")' in text
    assert "MALFORMED" not in text
