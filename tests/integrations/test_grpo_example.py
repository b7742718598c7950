"""examples/grpo_rollouts.py end to end, offline: a local OpenAI-compatible server is the policy."""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from pathlib import Path

import pytest
from optional_libs import import_optional

from airline_gym.harness.export import GRPO_EPS
from airline_gym.testing import OpenAIServer, Reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grpo_rollouts.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("grpo_rollouts_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def policy(request: dict) -> Reply:
    """Even sampling seeds answer task 3 ("4" bags) then call done; odd seeds quit at once."""
    turns = sum(m["role"] == "assistant" for m in request["messages"])  # 1 = just the greeting
    if request.get("seed", 1) % 2 == 0 and turns == 1:
        return Reply("You can check 4 suitcases in total on this reservation.")
    return Reply(tool_calls=[{"name": "done", "arguments": {}}])


def customer(request: dict) -> Reply:
    """An LLM customer that asks once and then leaves (its own turns are "assistant" here)."""
    if any(m["role"] == "assistant" for m in request["messages"]):
        return Reply("Thanks, that is all. ###STOP###")
    return Reply("Hi, I am anya_garcia_5901. How many bags can I check on JMO1MG?")


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run(example, server: OpenAIServer, tmp_path: Path, *extra: str) -> list[dict]:
    out = tmp_path / "rollouts.jsonl"
    argv = ["--model", "openai/policy", "--api-base", server.base_url, "--api-key", "sk-test"]
    assert example.main([*argv, "--out", str(out), *extra]) == 0
    return read(out)


def test_grpo_step_rows_and_advantages(example, tmp_path, capsys):
    with OpenAIServer(policy) as server:
        rows = run(example, server, tmp_path, "--task-ids", "3,17", "--group-size", "4")
    assert len(rows) == 8
    assert [r["task_id"] for r in rows] == ["3"] * 4 + ["17"] * 4
    assert [r["seed"] for r in rows] == list(range(8))
    assert [r["group_id"] for r in rows] == [r["task_id"] for r in rows]
    # the server saw each rollout's seed, and task 3 is solved by the even seeds only
    assert {r["seed"] for r in server.requests} == set(range(8))
    assert [r["reward"] for r in rows[:4]] == [1.0, 0.0, 1.0, 0.0]
    assert [r["reward"] for r in rows[4:]] == [0.0] * 4  # task 17 needs DB writes
    std = statistics.stdev([1.0, 0.0, 1.0, 0.0])
    expected = [0.5 / (std + GRPO_EPS), -0.5 / (std + GRPO_EPS)] * 2 + [0.0] * 4
    assert [r["advantage"] for r in rows] == pytest.approx(expected)
    solved = rows[0]
    # the scripted customer (playing task 3's intent) hangs up once told the number
    assert solved["termination_reason"] == "user_stop" and solved["num_errors"] == 0
    assert solved["messages"][0]["role"] == "system"
    assert "4 suitcases" in solved["messages"][-2]["content"]
    assert "###STOP###" in solved["messages"][-1]["content"]
    assert [t["function"]["name"] for t in solved["tools"]][-1] == "done"
    printed = capsys.readouterr().out
    assert "task   3: rewards 1 0 1 0 | mean 0.50" in printed
    assert "8 rollouts over 2 tasks, mean reward 0.250" in printed

    datasets = import_optional("datasets")
    ds = datasets.load_dataset(
        "json", data_files=str(tmp_path / "rollouts.jsonl"), split="train",
        cache_dir=str(tmp_path / "hf"),
    )  # fmt: skip
    assert ds.num_rows == 8 and ds["advantage"] == pytest.approx(expected)
    assert ds[0]["messages"] == solved["messages"]


def test_rloo_with_an_llm_customer(example, tmp_path):
    with OpenAIServer(policy) as server, OpenAIServer(customer) as user_server:
        rows = run(
            example, server, tmp_path, "--task-ids", "3", "--group-size", "3", "--seed", "10",
            "--advantage", "rloo", "--user", "llm", "--user-model", "openai/customer",
            "--user-api-base", user_server.base_url, "--user-api-key", "sk-test",
        )  # fmt: skip
    assert user_server.requests and all(r["model"] == "customer" for r in user_server.requests)
    assert [r["seed"] for r in rows] == [10, 11, 12]
    assert [r["reward"] for r in rows] == [1.0, 0.0, 1.0]
    assert [r["advantage"] for r in rows] == pytest.approx([0.5, -1.0, 0.5])
    assert rows[0]["termination_reason"] == "user_stop"


def test_split_batch_and_failed_policy(example, tmp_path, capsys):
    """Tasks drawn from a split; a policy that always errors: named, exit 1, nothing written."""
    out = tmp_path / "rollouts.jsonl"
    with OpenAIServer(default=Reply(fault="400")) as server:
        argv = ["--model", "openai/policy", "--api-base", server.base_url, "--api-key", "k"]
        argv += ["--split", "train", "--batch", "2", "--group-size", "2", "--out", str(out)]
        assert example.main(argv) == 1
    captured = capsys.readouterr()
    assert "4 of 4 rollouts failed" in captured.err and "HTTP 400" in captured.err
    assert "no rollout succeeded" in captured.err and not out.exists()


def test_missing_credentials_fail_fast(example, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "x.jsonl"
    assert example.main(["--model", "openai/gpt-4.1", "--task-ids", "3", "--out", str(out)]) == 2
    assert "credentials" in capsys.readouterr().err and not out.exists()


def test_benchmark_tau3_plays_tau3_tasks_with_tau3_s_customer(example, tmp_path, tau3):
    import tau3_case as case
    from scripted_policy import as_reply

    gold = case.gold_messages()

    def gold_policy(request: dict) -> Reply:  # the n-th reply after the greeting
        return as_reply(gold[sum(m["role"] == "assistant" for m in request["messages"]) - 1])

    with OpenAIServer(gold_policy) as server, case.customer_server() as user_server:
        rows = run(
            example, server, tmp_path, "--benchmark", "tau3", "--task-ids", case.TASK,
            "--group-size", "2", "--user", "llm", "--user-model", "openai/customer",
            "--user-api-base", user_server.base_url, "--user-api-key", "sk-test",
        )  # fmt: skip
    assert [(r["task_id"], r["termination_reason"]) for r in rows] == [
        (case.TASK, "agent_stop")
    ] * 2
    assert [r["reward"] for r in rows] == [case.check_grades_differ()] * 2 == [1.0, 1.0]
    case.assert_tau3_customer(user_server.requests)
