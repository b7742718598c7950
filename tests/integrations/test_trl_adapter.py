"""The TRL adapter's tool methods on bad input, without TRL installed (issue 17.16).

``AirlineToolEnv`` is plain Python: TRL only calls its methods. A message the env refuses gets
the env's own reason back (and counts as an error, as in the env); wrong positional arguments
raise ``TypeError`` like any Python function, which TRL turns into a tool error for the model.
"""

from __future__ import annotations

from typing import Any

import pytest

from airline_gym.integrations.trl import AirlineToolEnv


@pytest.fixture
def env() -> AirlineToolEnv:
    tool_env = AirlineToolEnv(user="scripted")
    tool_env.reset(task_id="17", seed=0)
    return tool_env


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("", "empty action"),
        ("   ", "empty action"),
        (None, "empty action"),
        ("x" * 1_000_001, "message too long"),
    ],
)
def test_a_refused_message_says_why_and_the_episode_goes_on(
    env: AirlineToolEnv, message: Any, reason: str
) -> None:
    reply = env.respond_to_user(message)
    assert reason in reply and reply.startswith("Error: invalid action")
    assert "over" not in reply
    assert env.info["termination_reason"] is None and env.info["num_errors"] == 1
    assert "omar_rossi_1241" not in reply  # not a customer turn
    assert env.respond_to_user("Could you give me your user id?")  # the customer still answers


def test_the_ending_is_named_when_a_refusal_ends_the_episode() -> None:
    tool_env = AirlineToolEnv(user="scripted", max_errors=2)
    tool_env.reset(task_id="17", seed=0)
    tool_env.respond_to_user("")
    reply = tool_env.respond_to_user("")
    assert "empty action" in reply and "(The conversation is over: too_many_errors.)" in reply
    with pytest.raises(ValueError, match="over"):
        tool_env.respond_to_user("hello?")


def test_extra_positional_arguments_are_refused(env: AirlineToolEnv) -> None:
    with pytest.raises(TypeError, match=r"get_user_details\(\) takes 1 positional"):
        env.get_user_details("omar_rossi_1241", "extra")  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="multiple values for argument 'user_id'"):
        env.get_user_details("omar_rossi_1241", user_id="x")  # type: ignore[attr-defined]
    assert env.info["num_errors"] == 0  # refused before reaching the env
    details = env.get_user_details("omar_rossi_1241")  # type: ignore[attr-defined]
    assert '"user_id": "omar_rossi_1241"' in details
