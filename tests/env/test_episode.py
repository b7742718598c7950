"""The conversation loop of one episode (``airline_gym.env.episode``), without gymnasium.

A tiny customer that says its lines in order drives the loop, so every count below is the
reference's rule (spec §5) applied by hand: the customer's first message is step 1, every agent
message, tool batch and customer message is one more, and the limits override a stop.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from airline_gym.domain.database import load_pristine
from airline_gym.domain.grading import (
    AGENT_STOP,
    MAX_STEPS,
    TOO_MANY_ERRORS,
    USER_ERROR,
    USER_STOP,
)
from airline_gym.domain.prompts import GREETING
from airline_gym.domain.tasks import Task
from airline_gym.env.episode import Episode
from airline_gym.env.protocols import GYM, LEADERBOARD, get_protocol
from airline_gym.users.base import Dialogue, UserSimulator, UserSimulatorError


class LinesUser(UserSimulator):
    """Says its lines in order; an exception in the list is raised instead; records what it saw."""

    def __init__(self, *lines: str | Exception) -> None:
        self.lines = list(lines)
        self.seen: list[Dialogue] = []

    def reset(self, task: Task, seed: int | None = None) -> None:
        """Nothing to prepare."""

    def reply(self, dialogue: Dialogue) -> str:
        self.seen.append([dict(m) for m in dialogue])
        line = self.lines.pop(0)
        if isinstance(line, Exception):
            raise line
        return line


def episode(
    tau2_tasks: Any, *lines: str | Exception, protocol: str = GYM, **limits: int
) -> Episode:
    user = LinesUser(*lines)
    return Episode(
        tau2_tasks["3"], load_pristine().fork(), user, protocol=get_protocol(protocol), **limits
    )


def call(name: str, **arguments: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [{"function": function}]}


def text(content: str) -> dict[str, str]:
    return {"role": "assistant", "content": content}


def test_steps_are_counted_as_the_reference_counts_them(tau2_tasks: Any) -> None:
    ep = episode(tau2_tasks, "Hi, I am mia_li_3668.", "Thanks.")
    assert [m["role"] for m in ep.start()] == ["user"] and ep.step_count == 1
    observation = ep.act(call("get_user_details", user_id="mia_li_3668"))
    assert [m["role"] for m in observation] == ["tool"] and ep.step_count == 3  # call + batch
    assert ep.act(text("Done.")) == [{"role": "user", "content": "Thanks."}]
    assert ep.step_count == 5 and not ep.done  # message + reply
    assert ep.act(call("done")) == [
        {"role": "tool", "tool_call_id": "call_1", "content": "Conversation ended by the agent."}
    ]
    assert ep.step_count == 6 and ep.termination_reason == AGENT_STOP  # `done` alone: no batch


def test_the_customer_sees_the_greeting_and_text_but_no_tool_traffic(tau2_tasks: Any) -> None:
    ep = episode(tau2_tasks, "Hello.", "Bye ###STOP###")
    ep.start()
    ep.act(call("get_user_details", user_id="mia_li_3668"))
    ep.act(text("Anything else?"))
    assert ep.termination_reason == USER_STOP
    seen = ep.user.seen  # type: ignore[attr-defined]
    assert seen[0] == [{"role": "assistant", "content": GREETING}]
    assert [m["content"] for m in seen[1]] == [GREETING, "Hello.", "Anything else?"]


def test_max_steps_overrides_a_stop_in_the_same_step(tau2_tasks: Any) -> None:
    ep = episode(tau2_tasks, "Hello.", "###STOP###", max_steps=3)
    ep.start()
    ep.act(text("How can I help?"))  # steps 2 and 3: the customer stops on the last step
    assert ep.step_count == 3 and ep.termination_reason == MAX_STEPS


def test_too_many_errors_overrides_max_steps(tau2_tasks: Any) -> None:
    ep = episode(tau2_tasks, "Hello.", max_steps=3, max_errors=1)
    ep.start()
    ep.act(call("get_user_details", user_id="nobody"))
    assert ep.step_count == 3 and ep.num_errors == 1
    assert ep.termination_reason == TOO_MANY_ERRORS


def test_an_unreadable_action_costs_a_step_and_an_error_and_stays_out_of_the_transcript(
    tau2_tasks: Any,
) -> None:
    ep = episode(tau2_tasks, "Hello.")
    ep.start()
    observation = ep.act(42)
    assert observation[0]["role"] == "system"
    assert observation[0]["content"].startswith("Error: invalid action")
    assert (ep.step_count, ep.num_errors, ep.done) == (2, 1, False)
    assert all(m["role"] != "system" for m in ep.transcript())
    assert all(m["role"] != "system" for m in ep.public_history())


@pytest.mark.parametrize("failure", [UserSimulatorError("model down"), "   "])
def test_a_failing_or_silent_customer_ends_the_episode_with_user_error(
    tau2_tasks: Any, failure: str | Exception
) -> None:
    ep = episode(tau2_tasks, "Hello.", failure)
    ep.start()
    assert ep.act(text("How can I help?")) == []
    assert ep.termination_reason == USER_ERROR
    assert ep.error_detail is not None and "user simulator failed" in ep.error_detail
    assert ep.grade().reward == 0.0


def test_under_leaderboard_the_agent_cannot_stop(tau2_tasks: Any) -> None:
    ep = episode(tau2_tasks, "Hello.", "Sure.", protocol=LEADERBOARD)
    ep.start()
    observation = ep.act(call("done"))
    assert observation[0]["content"].startswith("Error:") and ep.num_errors == 1
    ep.act(text("Goodbye ###STOP###"))
    assert not ep.done and ep.step_count == 5


def test_abort_keeps_an_earlier_ending_and_the_history_is_a_copy(tau2_tasks: Any) -> None:
    ep = episode(tau2_tasks, "Hello.")
    ep.start()
    ep.abort("agent_error", "the model timed out")
    ep.abort("other", "ignored")
    assert (ep.termination_reason, ep.error_detail) == ("agent_error", "the model timed out")
    with pytest.raises(RuntimeError, match="episode is over"):
        ep.act(text("late"))
    history = ep.public_history()
    history[0]["content"] = "edited"
    assert ep.public_history()[0]["content"] == GREETING
