"""examples/grpo_rollouts.py when things go wrong: no server, a keyless local customer."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
from pathlib import Path

import pytest

from airline_gym.testing import OpenAIServer, Reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grpo_rollouts.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("grpo_rollouts_failures", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens here once the socket is closed


def test_no_server_names_the_connection_failure_and_exits_non_zero(
    example, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "rollouts.jsonl"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    argv = ["--model", "openai/policy", "--api-base", url, "--task-ids", "17", "--group-size", "2"]
    assert example.main([*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "2 of 2 rollouts failed" in err and "connect" in err.lower() and url in err
    assert not out.exists()


def test_partial_failure_still_writes_and_warns(
    example, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    def policy(request: dict) -> Reply:  # odd seeds fail with a server error every time
        if request.get("seed", 0) % 2:
            return Reply(fault="400")
        return Reply(tool_calls=[{"name": "done", "arguments": {}}])

    out = tmp_path / "rollouts.jsonl"
    with OpenAIServer(policy) as server:
        argv = ["--model", "openai/policy", "--api-base", server.base_url, "--api-key", "k"]
        code = example.main([*argv, "--task-ids", "3", "--group-size", "2", "--out", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["termination_reason"] for r in rows) == ["agent_error", "agent_stop"]
    assert "1 of 2 rollouts failed" in capsys.readouterr().err


def test_llm_customer_on_a_local_server_needs_no_key(
    example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def policy(request: dict) -> Reply:
        return Reply(tool_calls=[{"name": "done", "arguments": {}}])

    def customer(request: dict) -> Reply:
        return Reply("Hi, how many bags can I check on JMO1MG?")

    out = tmp_path / "rollouts.jsonl"
    with OpenAIServer(policy) as agent_server, OpenAIServer(customer) as user_server:
        argv = ["--model", "openai/policy", "--api-base", agent_server.base_url]
        argv += ["--user", "llm", "--user-model", "openai/user"]
        argv += ["--user-api-base", user_server.base_url, "--task-ids", "3", "--group-size", "2"]
        assert example.main([*argv, "--out", str(out)]) == 0
        assert user_server.requests  # the customer's requests reached the local server
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["termination_reason"] for r in rows] == ["agent_stop", "agent_stop"]
