"""Huge integers in tool arguments: a tool error observation, never an exception (issue 11.1)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from airline_gym.env import AirlineEnv
from airline_gym.env.spaces import MessageListSpace

USER = "omar_rossi_1241"  # task 17's customer


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def _every_call_answered(env: AirlineEnv) -> None:
    assert env.episode is not None
    history = env.episode.messages
    for i, message in enumerate(history):
        for call in message.get("tool_calls") or ():
            answers = [m for m in history[i + 1 :] if m.get("tool_call_id") == call["id"]]
            assert len(answers) == 1, f"tool call {call['id']} has {len(answers)} results"


HUGE_ARGUMENTS = {
    "401-digit JSON int": f'{{"user_id": "{USER}", "amount": {"9" * 401}}}',
    "5,000-digit JSON int": f'{{"user_id": "{USER}", "amount": {"9" * 5000}}}',
    "401-digit Python int": {"user_id": USER, "amount": 10**401},
    "5,000-digit Python int": {"user_id": USER, "amount": 10**5000},
    "negative 401-digit Python int": {"user_id": USER, "amount": -(10**401)},
}


@pytest.mark.parametrize("arguments", HUGE_ARGUMENTS.values(), ids=HUGE_ARGUMENTS)
def test_huge_certificate_amount_is_a_tool_error(arguments: Any) -> None:
    env = AirlineEnv(task=17, user="scripted")
    env.reset(seed=0)
    before = env.episode.db.user(USER)["payment_methods"]  # type: ignore[union-attr]
    before_ids = set(before)
    obs, reward, terminated, truncated, info = env.step(_call("big", "send_certificate", arguments))
    assert MessageListSpace().contains(obs)
    assert [m["role"] for m in obs] == ["tool"] and obs[0]["tool_call_id"] == "big"
    assert obs[0]["content"].startswith("Error: ")
    assert "amount" in obs[0]["content"] or "number" in obs[0]["content"]
    assert len(obs[0]["content"]) < 300  # the number is described, not echoed
    assert info["num_errors"] == 1 and not (terminated or truncated) and reward == 0.0
    after = env.episode.db.user(USER)["payment_methods"]  # type: ignore[union-attr]
    assert set(after) == before_ids  # no certificate was added
    _every_call_answered(env)
    json.dumps(info["messages"])  # the history stays JSON data
    # the episode goes on normally
    obs, *_ = env.step(_call("next", "get_user_details", {"user_id": USER}))
    assert obs[0]["content"].startswith("{")


def test_amount_that_fits_a_float_still_works_like_the_reference() -> None:
    env = AirlineEnv(task=17, user="scripted")
    env.reset(seed=0)
    obs, *_ = env.step(_call("ok", "send_certificate", {"user_id": USER, "amount": 2**70}))
    assert obs[0]["content"].startswith("Certificate certificate_")
    assert obs[0]["content"].endswith(f"with amount {2**70}.")


def test_huge_int_in_a_list_argument_is_a_tool_error() -> None:
    env = AirlineEnv(task=17, user="scripted")
    env.reset(seed=0)
    arguments = {
        "reservation_id": "4WQ150",
        "total_baggages": 10**5000,
        "nonfree_baggages": 0,
        "payment_id": "credit_card_4421486",
    }
    obs, *_ = env.step(_call("bags", "update_reservation_baggages", arguments))
    assert obs[0]["content"].startswith("Error: ") and "total_baggages" in obs[0]["content"]
    _every_call_answered(env)
