"""Trajectory export: JSONL records that load with `datasets` and serve as TRL SFT data."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from optional_libs import import_optional

from airline_gym.agents import GoldAgent, ScriptedAgent, text_message, tool_call_message
from airline_gym.env import AirlineEnv
from airline_gym.harness.export import (
    GRPO_EPS,
    episode_record,
    group_advantages,
    normalize_messages,
    write_jsonl,
)
from airline_gym.harness.runner import run_episodes


@pytest.fixture(scope="module")
def results(tau2_tasks):
    """A gold run (task 17), and a messy run with a non-message action and a bad tool call."""
    messy = ScriptedAgent(
        [
            42,  # not a message at all: counts as an error
            tool_call_message("get_user_details", {"user_id": 7}, "bad"),  # ill-typed call
            {"role": "assistant", "content": [{"type": "text", "text": "Let me check."}]},
            text_message("Anything else?"),
        ]
    )
    gold = run_episodes(
        lambda: AirlineEnv(user="scripted"), lambda: GoldAgent(tau2_tasks), [("17", 5)]
    )
    other = run_episodes(lambda: AirlineEnv(user="scripted"), lambda: messy, [("3", None)])
    return gold + other


def test_record_fields_and_types(results):
    record = episode_record(results[0], advantage=0.5, group_id="17")
    assert set(record) == {
        "messages",
        "tools",
        "reward",
        "task_id",
        "termination_reason",
        "seed",
        "num_errors",
        "steps",
        "advantage",
        "group_id",
    }
    assert record["reward"] == 1.0 and record["task_id"] == "17" and record["seed"] == 5
    assert record["termination_reason"] == "agent_stop"
    assert record["advantage"] == 0.5 and record["group_id"] == "17"
    assert record["messages"][0]["role"] == "system"
    assert record["messages"][0]["content"] == results[0].messages[0]["content"]
    assert [t["function"]["name"] for t in record["tools"]][-1] == "done"
    assert json.loads(json.dumps(record)) == record
    assert "advantage" not in episode_record(results[0])


def test_messages_have_consistent_types(results):
    for result in results:
        for message in episode_record(result)["messages"]:
            assert message["content"] is None or isinstance(message["content"], str)
            assert set(message) <= {"role", "content", "tool_calls", "tool_call_id"}
            for call in message.get("tool_calls", []):
                assert isinstance(call["function"]["arguments"], dict)  # what templates expect
    messy = episode_record(results[1])
    assert messy["seed"] is None and messy["num_errors"] == 2
    assert [m["role"] for m in messy["messages"]].count("system") == 1  # error notes stay out
    assert {"role": "assistant", "content": "Let me check."} in messy["messages"]


def test_normalize_messages():
    raw = [
        {"role": "assistant", "content": None, "extra": 1, "tool_calls": [
            {"id": "c1", "function": {"name": "calculate", "arguments": {"expression": "1+1"}}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "2.0", "name": "calculate"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]  # fmt: skip
    assert normalize_messages(raw) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "calculate", "arguments": {"expression": "1+1"}},
                }
            ],
        },
        {"role": "tool", "content": "2.0", "tool_call_id": "c1"},
        {"role": "user", "content": "ab"},
    ]


def test_write_jsonl(results, tmp_path):
    path = tmp_path / "out.jsonl"
    assert write_jsonl(results, path, advantages=[1.0, -1.0], group_ids=["a", "a"]) == 2
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["17", "3"]
    assert [r["advantage"] for r in rows] == [1.0, -1.0]
    assert rows[0] == episode_record(results[0], advantage=1.0, group_id="a")
    # records and results can be mixed; misaligned extras are refused
    write_jsonl([episode_record(results[0]), results[1]], path)
    assert len(path.read_text().splitlines()) == 2
    with pytest.raises(ValueError, match="advantages"):
        write_jsonl(results, path, advantages=[1.0])


def test_group_advantages_hand_computed():
    rewards = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    groups = ["a", "a", "a", "a", "b", "b", "c"]
    # group a: mean 0.5, sample std sqrt(1/3)
    std_a = statistics.stdev([1.0, 0.0, 0.0, 1.0])
    grpo = group_advantages(rewards, groups, "grpo")
    assert grpo[0] == pytest.approx(0.5 / (std_a + GRPO_EPS))
    assert grpo[1] == pytest.approx(-0.5 / (std_a + GRPO_EPS))
    assert grpo[4] == pytest.approx(0.5 / (math.sqrt(0.5) + GRPO_EPS))
    assert grpo[6] == 0.0  # a group of one
    rloo = group_advantages(rewards, groups, "rloo")
    assert rloo[:4] == pytest.approx([1 - 1 / 3, 0 - 2 / 3, 0 - 2 / 3, 1 - 1 / 3])
    assert rloo[4:] == pytest.approx([1.0, -1.0, 0.0])
    assert group_advantages([1.0, 1.0], ["x", "x"]) == [0.0, 0.0]
    with pytest.raises(ValueError):
        group_advantages([1.0], ["x"], "ppo")


def test_rows_load_with_datasets(results, tmp_path):
    datasets = import_optional("datasets")
    path = tmp_path / "out.jsonl"
    write_jsonl(results, path, advantages=[0.25, -0.25], group_ids=["g", "g"])
    ds = datasets.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache")
    )
    assert ds.num_rows == 2
    assert {"messages", "tools", "reward", "advantage"} <= set(ds.column_names)
    for row, result in zip(ds, results, strict=True):
        expected = episode_record(result)
        assert row["messages"] == expected["messages"]
        assert row["tools"] == expected["tools"]
        assert row["reward"] == expected["reward"]
