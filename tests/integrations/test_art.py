"""ART's own tau-bench client and rollout (openpipe-art's ``art.tau_bench``) against
``airline-gym serve``: the README example: art, run by ``art_child.py``.

``art.tau_bench`` ships in openpipe-art releases for Python >= 3.12 and CI's main venv is 3.11,
so CI builds a Python 3.12 venv for ART (``.ci/run``) and names its Python in
``$AIRLINE_GYM_ART_PYTHON``. This test serves the env in a thread (the CLI's own server), runs ART
there against it with a scripted OpenAI-compatible policy on 127.0.0.1, and checks each
trajectory's reward against the same episode played in process.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from extras import library_python, require

require("openenv", "fastapi", "uvicorn")  # the server side: airline-gym serve

from openenv_servers import running_server  # noqa: E402
from scripted_policy import as_reply, in_process, opening, scripts, text  # noqa: E402

from airline_gym.env import AirlineEnv  # noqa: E402
from airline_gym.testing.openai_server import OpenAIServer, Reply  # noqa: E402

pytestmark = pytest.mark.long  # a child interpreter imports the library (a minute or more)
HERE = Path(__file__).resolve().parent
PYTHON_VAR = "AIRLINE_GYM_ART_PYTHON"


def art_python() -> str:
    return library_python(PYTHON_VAR, "art", "openpipe-art >= 0.5.23 (Python >= 3.12)")


def run_art(*args: str) -> dict[str, Any]:
    """``art_child.py ARGS...`` in ART's venv; what it printed (one JSON object)."""
    done = subprocess.run(
        [art_python(), str(HERE / "art_child.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=HERE.parents[1],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


class ArtPolicy:
    """The scripted policy as ART's rollout asks it: ART's history has no greeting, so the
    customer's opening is message 1, and each assistant message after it is one reply."""

    def __init__(self, plays: dict[str, list[dict[str, Any]]]) -> None:
        self.plays = plays
        self.openers = {opening(task_id): task_id for task_id in plays}

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        task_id = self.openers[text(messages[1]["content"])]
        replies = sum(1 for m in messages[2:] if m["role"] == "assistant")
        return as_reply(self.plays[task_id][replies])


def test_art_rollout_rewards_are_the_env_grades(tau2_tasks):
    plays = scripts(tau2_tasks)
    _, info = AirlineEnv(user="scripted").reset(options={"task": "17"})
    with OpenAIServer(ArtPolicy(plays)) as policy, running_server() as serve_url:
        out = run_art(serve_url, policy.base_url)

    assert len(out["scenarios"]) == 50  # the base split, listed by ART's get_scenarios
    trajectories = out["trajectories"]
    for task_id in ("17", "3"):
        expected = in_process(task_id, 0, plays[task_id])
        assert trajectories[task_id]["reward"] == expected.reward == {"17": 1.0, "3": 0.0}[task_id]
        assert trajectories[task_id]["num_turns"] == len(plays[task_id])  # one per model reply
    # the model saw the env's system prompt and the reference's tools, unchanged
    for body in policy.requests:
        assert body["messages"][0] == {"role": "system", "content": info["system_prompt"]}
        assert body["tools"] == info["tools"]
    # the customer answered the model's text server-side, as the next user turn
    after_text = [b["messages"] for b in policy.requests if len(b["messages"]) == 4]
    assert any(m[2].get("content") == "Sure, let me look into that." for m in after_text)
    assert all(m[3]["role"] == "user" for m in after_text if m[2].get("content"))


def test_art_rollout_on_a_tau3_server_plays_tau3_with_tau3_s_customer(tau3, monkeypatch):
    """``airline-gym serve --benchmark tau3``: ART's rollout of task 7 gets tau3's grade, and the
    server's LLM customer was prompted with tau3's guidelines."""
    import tau3_case as case

    gold = case.gold_messages()

    def policy_replies(body: dict[str, Any]) -> Reply:  # ART's history has no greeting
        return as_reply(gold[sum(1 for m in body["messages"][2:] if m["role"] == "assistant")])

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the server's customer checks for a key
    options = ["--benchmark", "tau3", "--user-model", "openai/customer"]
    with (
        OpenAIServer(policy_replies) as policy,
        case.customer_server() as customer,
        running_server(*options, "--user-api-base", customer.base_url) as serve_url,
    ):
        out = run_art("tau3", serve_url, policy.base_url)
    assert out["reward"] == case.check_grades_differ() == 1.0  # tau2 would grade it 0.0
    assert out["num_turns"] == len(gold)
    assert policy.requests
    case.assert_tau3_customer(customer.requests)
