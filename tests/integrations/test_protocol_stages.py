"""One protocol from warm-start to eval: a row of ``warm-start --protocol P`` and a request of
``eval --protocol P`` give the model the same system prompt and tools, byte for byte, for every
protocol (the request recorded by a scripted OpenAI-compatible server on 127.0.0.1); TRL's rows
and tools are the ``tool-reply`` protocol's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airline_gym.env.protocols import PROTOCOLS, TOOL_REPLY
from airline_gym.testing.openai_server import OpenAIServer, Reply
from tests.cli_runner import cli
from tests.users.intent_tasks import write_tasks

TASK = "cancel"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tasks(tmp_path_factory.mktemp("tasks") / "tasks.json")


def warm_start_row(protocol: str, tasks: Path, folder: Path) -> dict:
    out = folder / f"{protocol}.jsonl"
    done = cli(
        "warm-start", "--tasks", tasks, "--task-ids", TASK, "--protocol", protocol, "--out", out
    )
    assert done.returncode == 0, done.stderr
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    return row


def first_request(protocol: str, tasks: Path, folder: Path) -> dict:
    with OpenAIServer(default=Reply("Goodbye.")) as server:
        done = cli(
            "eval", "--agent-model", "openai/policy", "--agent-api-base", server.base_url,
            "--tasks", tasks, "--task-ids", TASK, "--protocol", protocol, "--max-steps", "4",
            "--out", folder / f"{protocol}.json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return server.requests[0]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_warm_start_row_and_an_eval_request_give_the_same_prompt_and_tools(
    protocol: str, tasks: Path, tmp_path: Path
) -> None:
    row = warm_start_row(protocol, tasks, tmp_path)
    request = first_request(protocol, tasks, tmp_path)
    assert row["messages"][0] == {"role": "system", "content": request["messages"][0]["content"]}
    assert json.dumps(row["tools"]) == json.dumps(request["tools"])  # key order included
    # the conversation starts the same way too: the greeting, then the customer's opening
    assert [(m["role"], m["content"]) for m in row["messages"][1:3]] == [
        (m["role"], m["content"]) for m in request["messages"][1:3]
    ]
    names = [t["function"]["name"] for t in request["tools"]]
    assert ("done" in names) == (protocol != "leaderboard")
    assert ("respond_to_user" in names) == (protocol == TOOL_REPLY)
    results = json.loads((tmp_path / f"{protocol}.json").read_text())
    assert results["info"]["protocol"] == protocol
    assert results["info"]["leaderboard_comparable"] is (protocol == "leaderboard")


def test_trl_rows_and_tools_are_the_tool_reply_protocols(tasks: Path, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    import inspect

    from airline_gym.integrations.trl import AirlineToolEnv, dataset_rows, trl_schema

    request = first_request(TOOL_REPLY, tasks, tmp_path)
    (row,) = dataset_rows(task_ids=[TASK], tasks=str(tasks))
    env = AirlineToolEnv(user="scripted", tasks=str(tasks))
    opener = env.reset(**row)
    *head, last = row["prompt"]
    prompt = [*head, {**last, "content": last["content"] + opener}]  # as TRL appends it
    assert prompt == [{"role": m["role"], "content": m["content"]} for m in request["messages"][:3]]
    methods = [
        getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]  # TRL's rule for an environment's tools
    assert json.dumps([trl_schema(m) for m in methods]) == json.dumps(request["tools"])


def test_a_tool_reply_warm_start_row_talks_through_respond_to_user(
    tasks: Path, tmp_path: Path
) -> None:
    row = warm_start_row(TOOL_REPLY, tasks, tmp_path)
    assistant = [m for m in row["messages"] if m["role"] == "assistant"][1:]  # after the greeting
    assert assistant and all(m.get("tool_calls") for m in assistant)  # never a bare text reply
    said = [
        c["function"]["arguments"]["message"]
        for m in assistant
        for c in m["tool_calls"]
        if c["function"]["name"] == "respond_to_user"
    ]
    assert any("Shall I proceed?" in text for text in said)
    ids = {c["id"] for m in assistant for c in m["tool_calls"]}
    answered = {m["tool_call_id"] for m in row["messages"] if m["role"] == "tool"}
    assert ids == answered  # every call has its result (the customer's reply for respond_to_user)
    assert [m["role"] for m in row["messages"]].count("user") == 1  # only the opening
