"""The Inspect task with the real inspect-ai: Inspect's own eval loop (the README example and the
README's ``inspect eval airline_gym/airline`` command) against a scripted OpenAI-compatible server
on 127.0.0.1, through Inspect's ``openai-api`` provider.

inspect-ai's ``openai-api`` provider needs openai >= 3.4 and the ``verifiers`` extra pins
openai < 3, so they cannot share a venv: CI builds a second one for Inspect (``.ci/run``) and
names its Python in ``$AIRLINE_GYM_INSPECT_PYTHON``. This test runs Inspect there
(``inspect_child.py`` runs the README example: inspect, then the command) and checks what
Inspect logged against the same episodes played in process.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from extras import library_python
from scripted_policy import Model, in_process, scripts, text

from airline_gym.domain.prompts import user_system_prompt
from airline_gym.env import AirlineEnv
from airline_gym.testing.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.long  # a child interpreter imports the library (a minute or more)
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PYTHON_VAR = "AIRLINE_GYM_INSPECT_PYTHON"
CUSTOMER_OPENER = "Hello, I would like to change a flight."


class Server:
    """The scripted agent of scripted_policy; the customer (model ``customer``) says one line
    then stops; the agent facing that customer calls ``done`` at once."""

    def __init__(self, agent: Model) -> None:
        self.agent = agent
        self.customer_requests: list[dict] = []

    def __call__(self, body: dict) -> Reply:
        if body["model"] == "customer":
            self.customer_requests.append(body)
            first = len(self.customer_requests) == 1
            return Reply(CUSTOMER_OPENER if first else "###STOP###")
        if text(body["messages"][2]["content"]) == CUSTOMER_OPENER:
            return Reply(tool_calls=[{"name": "done", "arguments": {}}])
        return self.agent(body)


def inspect_python() -> str:
    return library_python(PYTHON_VAR, "inspect_ai", "inspect-ai")


def run_inspect(base_url: str, log_dir: Path, *mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INSPECT_DISPLAY": "none"}
    done = subprocess.run(
        [inspect_python(), str(HERE / "inspect_child.py"), *mode, base_url, str(log_dir)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_inspect_eval_scores_are_the_env_grades(tau2_tasks, tmp_path, tau3):
    plays = scripts(tau2_tasks)
    tools = AirlineEnv(user="scripted").reset(options={"task": "17"})[1]["tools"]
    policy = Server(Model(plays))
    with OpenAIServer(policy) as server:
        out = run_inspect(server.base_url, tmp_path)

    assert out["status"] == "success"
    by_task = {s["metadata"]["task_id"]: s for s in out["samples"]}
    assert sorted(by_task) == ["17", "3"]
    for task_id, seed in (("17", 0), ("3", 1)):  # the task's seeds count up from 0
        sample = by_task[task_id]  # the README example plays tau3's tasks
        expected = in_process(task_id, seed, plays[task_id], "tau3")
        assert sample["id"] == f"{task_id}-{seed}" and sample["error"] is None
        assert sample["metadata"]["benchmark"] == "tau3"
        assert sample["value"] == expected.reward == {"17": 1.0, "3": 0.0}[task_id]
        meta = sample["metadata"]
        assert meta["termination_reason"] == expected.termination_reason == "agent_stop"
        assert meta["db_diff"] == expected.reward_info["db_diff"]
        assert meta["communicate_checks"] == expected.reward_info["communicate_checks"]
        assert meta["db_match"] == expected.reward_info["db_match"]
        assert (meta["steps"], meta["tool_errors"]) == (expected.steps, expected.num_errors)
        # the transcript is the sample's messages, tool results included
        assert sample["roles"] == [m["role"] for m in expected.messages]
    assert by_task["3"]["metadata"]["db_diff"]  # the wrong cancellation is in the diff

    # the command line found the task through the package's entry point and graded it the same
    cli = out["cli"]
    assert cli["returncode"] == 0, cli["stderr"]
    assert cli["status"] == "success" and cli["task"] == "airline_gym/airline"
    assert [(s["id"], s["value"]) for s in cli["samples"]] == [("17-0", 1.0)]

    # every request offered the env's tools: the reference's names and descriptions, with the
    # $refs inlined (Inspect's tool model has no $defs)
    for body in server.requests:
        if body["model"] == "customer":
            continue
        sent = {t["function"]["name"]: t["function"] for t in body["tools"]}
        assert list(sent) == [t["function"]["name"] for t in tools]
        for tool in tools:
            function = tool["function"]
            assert sent[function["name"]]["description"] == function["description"]
            assert "$ref" not in json.dumps(sent[function["name"]])
    book = next(t for t in tools if t["function"]["name"] == "book_reservation")["function"]
    passenger = book["parameters"]["$defs"]["Passenger"]["properties"]
    sent_book = server.requests[0]["tools"][0]["function"]
    assert sent_book["name"] == "book_reservation"
    sent_items = sent_book["parameters"]["properties"]["passengers"]["items"]["anyOf"]
    sent_passenger = sent_items[0]["properties"]  # was {"$ref": "#/$defs/Passenger"}
    assert {k: v["description"] for k, v in sent_passenger.items()} == {
        k: v["description"] for k, v in passenger.items()
    }

    # model role "user": the customer's requests carry the reference's customer prompt, and its
    # words reached the agent as the customer's turn
    role = out["role"]
    assert role["status"] == "success"
    (sample,) = role["samples"]
    assert sample["metadata"]["termination_reason"] == "agent_stop" and sample["value"] == 0.0
    first = policy.customer_requests[0]["messages"]
    assert first[0]["role"] == "system"
    assert text(first[0]["content"]) == user_system_prompt(tau2_tasks["17"])
    assert len(policy.customer_requests) == 1  # the agent's done ended the episode
    assert not any(body.get("tools") for body in policy.customer_requests)


def test_benchmark_tau3_plays_tau3_tasks_with_tau3_s_customer(tau3, tmp_path):
    """``airline(benchmark="tau3")`` plays tau3's task 7 with tau3's customer guidelines;
    ``-T benchmark=tau4`` is refused."""
    import tau3_case as case
    from scripted_policy import as_reply

    gold, customer_requests = case.gold_messages(), []

    def tau3_server(body: dict) -> Reply:
        if body["model"] == "customer":
            customer_requests.append(body)
            return Reply(case.OPENER)
        return as_reply(gold[sum(m["role"] == "assistant" for m in body["messages"]) - 1])

    with OpenAIServer(tau3_server) as server:
        out = run_inspect(server.base_url, tmp_path, "tau3")
    assert out["status"] == "success"
    (sample,) = out["samples"]
    assert sample["id"] == f"{case.TASK}-5" and sample["error"] is None
    assert sample["metadata"]["benchmark"] == "tau3"
    assert sample["metadata"]["termination_reason"] == "agent_stop"
    assert sample["value"] == case.check_grades_differ() == 1.0  # tau2 would grade it 0.0
    case.assert_tau3_customer(customer_requests)
    bad = out["bad"]
    assert bad["returncode"] != 0
    assert "benchmark must be one of tau2, tau3; got 'tau4'" in bad["output"]
