"""The action and observation spaces (``airline_gym.env.spaces``): honest ``contains``, seeded
``sample``."""

from __future__ import annotations

from typing import Any

import pytest

from airline_gym.domain.schemas import done_schema, tool_schemas
from airline_gym.env.spaces import AssistantMessageSpace, MessageListSpace

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_user_details", "arguments": '{"user_id": "x"}'},
        }
    ],
}


@pytest.mark.parametrize(
    "action",
    [
        {"role": "assistant", "content": "Hello"},
        CALL,
        {"name": "get_user_details", "arguments": {"user_id": "x"}},
        "get_user_details(user_id='x')",
        "plain text for the customer",
        # unknown tools and bad arguments are still messages: the env answers with an error
        {"name": "no_such_tool", "arguments": {}},
    ],
)
def test_action_space_contains_what_the_env_reads_as_a_message(action: Any) -> None:
    assert AssistantMessageSpace().contains(action)


@pytest.mark.parametrize("action", [42, None, [CALL], {"role": "assistant"}, {"content": 3}])
def test_action_space_refuses_what_is_not_a_message(action: Any) -> None:
    assert not AssistantMessageSpace().contains(action)


def test_action_samples_are_seeded_contained_and_call_only_offered_tools() -> None:
    tools = tool_schemas()[:3]
    space = AssistantMessageSpace(tools, seed=7)
    again = AssistantMessageSpace(tools, seed=7)
    samples = [space.sample() for _ in range(200)]
    assert samples == [again.sample() for _ in range(200)]
    assert all(space.contains(s) for s in samples)
    names = {c["function"]["name"] for s in samples for c in s.get("tool_calls", [])}
    assert names == {t["function"]["name"] for t in tools}
    assert any("tool_calls" not in s for s in samples)  # text for the customer too


def test_default_action_space_offers_the_gym_tools() -> None:
    assert AssistantMessageSpace().tools == [*tool_schemas(), done_schema()]
    assert AssistantMessageSpace() == AssistantMessageSpace()
    assert AssistantMessageSpace(tool_schemas()) != AssistantMessageSpace()


@pytest.mark.parametrize(
    "observation",
    [
        [],
        [{"role": "user", "content": "hi"}],
        [{"role": "tool", "tool_call_id": "c1", "content": "{}"}],
        [{"role": "system", "content": "Error: invalid action: ..."}],
    ],
)
def test_observation_space_contains_the_env_message_forms(observation: Any) -> None:
    assert MessageListSpace().contains(observation)


@pytest.mark.parametrize(
    "observation",
    [
        {"role": "user", "content": "hi"},  # not a list
        [{"role": "assistant", "content": "hi"}],  # the agent's own role
        [{"role": "user", "content": None}],
        [{"role": "user", "content": "hi", "extra": 1}],
        [{"role": "tool", "content": "{}"}],  # no tool_call_id
        [{"role": "tool", "tool_call_id": 1, "content": "{}"}],
        [{"role": "user", "tool_call_id": "c1", "content": "hi"}],
    ],
)
def test_observation_space_refuses_other_shapes(observation: Any) -> None:
    assert not MessageListSpace().contains(observation)


def test_observation_samples_are_seeded_and_contained() -> None:
    space, again = MessageListSpace(seed=3), MessageListSpace(seed=3)
    samples = [space.sample() for _ in range(100)]
    assert samples == [again.sample() for _ in range(100)]
    assert all(space.contains(s) for s in samples)
    assert {m["role"] for s in samples for m in s} == {"user", "tool", "system"}
