"""Tool names, call ids and argument texts have a size cap (issue 11.20)."""

from __future__ import annotations

import pytest
from cpu_clock import cpu_clock

from airline_gym.env import AirlineEnv
from airline_gym.env.actions import MAX_ACTION_CHARS, MAX_ARGUMENT_CHARS, MAX_NAME_CHARS

MB = 1_000_000


def _call(name: str, call_id: str = "c", arguments: str = "{}") -> dict:
    function = {"name": name, "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


@pytest.mark.parametrize(
    "action",
    [
        _call("x" * (20 * MB)),
        _call("get_user_details", call_id="i" * (MAX_ACTION_CHARS + 1)),
        _call("get_user_details", arguments='{"user_id": "' + "u" * MAX_ARGUMENT_CHARS + '"}'),
    ],
    ids=["20 MB name", "oversized id", "oversized arguments"],
)
def test_oversized_parts_are_an_error_observation_not_echoed(action: dict) -> None:
    env = AirlineEnv(task=17, user="scripted")
    env.reset(seed=0)
    with cpu_clock() as spent:
        obs, reward, terminated, truncated, info = env.step(action)
    assert spent() < 2
    assert [m["role"] for m in obs] == ["system"]
    assert (
        obs[0]["content"].startswith("Error: invalid action:") and "too long" in obs[0]["content"]
    )
    assert len(obs[0]["content"]) < 200
    assert info["num_errors"] == 1 and not (terminated or truncated)
    assert sum(len(m.get("content") or "") for m in info["messages"][1:]) < 10_000


def test_a_long_unknown_name_under_the_cap_is_answered_by_the_tool_error() -> None:
    env = AirlineEnv(task=17, user="scripted")
    env.reset(seed=0)
    obs, *_ = env.step(_call("n" * MAX_NAME_CHARS))
    assert obs[0]["role"] == "tool" and obs[0]["content"].startswith("Error: Tool 'nnn")
