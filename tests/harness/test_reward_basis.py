"""Opt-in reward bases: ``reward_basis=`` on the env, ``--reward-basis`` on eval, regrade, audit.

The default stays each task's own basis (DB x COMMUNICATE, the leaderboard's). A basis with
``ACTION`` multiplies the reference's action check; one with ``NL_ASSERTION`` asks an LLM judge
(here a scripted OpenAI-compatible server on 127.0.0.1) once per finished episode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from cli_runner import run_cli
from scripted_replies import judge_says

import airline_gym  # noqa: F401  (registers the env ids)
from airline_gym.domain.task_checks import check_gradable
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.testing.openai_server import OpenAIServer, Reply

TASKS = load_task_set("tau2")
# Tasks a do-nothing agent passes on the leaderboard's basis (no write, nothing to say) ...
NOOP_PASSES = [
    t.id
    for t in TASKS
    if not any(a.name in WRITE_TOOLS for a in t.actions) and not t.communicate_info
]
# ... and on ACTION (no gold action at all: the reference's "No actions to evaluate").
NO_GOLD_ACTIONS = [t.id for t in TASKS if not t.actions]
READ_ONLY_WITH_ACTIONS = next(t for t in NOOP_PASSES if t not in NO_GOLD_ACTIONS)


def run(*args: str) -> tuple[int, str, str]:
    """``airline-gym ARGS`` in this process: (exit code, stdout, stderr)."""
    done = run_cli(*args)
    return done.returncode, done.stdout, done.stderr


def _done() -> dict[str, Any]:
    call = {"id": "d", "type": "function", "function": {"name": "done", "arguments": "{}"}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _noop_episode(task_id: str, **kwargs: Any) -> tuple[float, dict[str, Any], Any]:
    env = gym.make("AirlineScripted-v0", task=task_id, **kwargs)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(_done())
    assert terminated
    return reward, info["reward_info"], env


# --- the env ---------------------------------------------------------------------------------
def test_default_is_the_tasks_own_basis() -> None:
    reward, info, _ = _noop_episode(READ_ONLY_WITH_ACTIONS)
    assert reward == 1.0
    assert info["reward_basis"] == ["DB", "COMMUNICATE"]
    assert info["breakdown"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert info["nl_assertions"] is None and info["judge_error"] is None


def test_action_basis_fails_a_do_nothing_agent_on_a_task_with_gold_reads() -> None:
    reward, info, _ = _noop_episode(READ_ONLY_WITH_ACTIONS, reward_basis=["DB", "ACTION"])
    assert reward == 0.0
    assert info["reward_basis"] == ["DB", "ACTION"]
    assert info["breakdown"] == {"DB": 1.0, "ACTION": 0.0}
    assert not any(c["met"] for c in info["action_checks"])
    reward, info, _ = _noop_episode(NO_GOLD_ACTIONS[0], reward_basis="db, action")
    assert reward == 1.0 and info["reward_basis"] == ["DB", "ACTION"]


@pytest.mark.parametrize(
    "basis, text",
    [(["DB", "SPEED"], "SPEED"), ("DB,,nope", "NOPE"), ([], "names no component"), ("", "no")],
)
def test_unknown_or_empty_basis_is_refused_at_construction(basis: Any, text: str) -> None:
    with pytest.raises(ConfigError, match=text):
        gym.make("AirlineScripted-v0", task="0", reward_basis=basis)


def _judged_noop(task_id: str, met: bool) -> tuple[float, dict[str, Any], int]:
    """A do-nothing episode on DB x NL_ASSERTION: (reward, reward_info, judge requests)."""
    with OpenAIServer(judge_says(met, TASKS)) as server:
        reward, info, env = _noop_episode(
            task_id,
            reward_basis=["DB", "NL_ASSERTION"],
            judge="openai/judge",
            judge_llm_args={"api_base": server.base_url},
        )
        env.unwrapped.episode.grade()  # a wrapper grading again does not ask again
        return reward, info, len(server.requests)


def test_nl_assertion_basis_asks_the_judge_once_and_records_its_verdicts() -> None:
    task = TASKS[READ_ONLY_WITH_ACTIONS]
    reward, info, asked = _judged_noop(task.id, met=False)
    assert asked == 1 and reward == 0.0
    assert info["breakdown"] == {"DB": 1.0, "NL_ASSERTION": 0.0}
    assert [c["nl_assertion"] for c in info["nl_assertions"]] == list(task.nl_assertions)
    assert all(c["justification"] == "scripted" and not c["met"] for c in info["nl_assertions"])
    reward, info, asked = _judged_noop(task.id, met=True)
    assert asked == 1 and reward == 1.0 and info["breakdown"]["NL_ASSERTION"] == 1.0


def test_a_failing_judge_is_a_recorded_cause_not_a_silent_zero() -> None:
    with OpenAIServer(default=Reply("not a verdict")) as server:
        reward, info, _ = _noop_episode(
            READ_ONLY_WITH_ACTIONS,
            reward_basis=["NL_ASSERTION"],
            judge="openai/judge",
            judge_llm_args={"api_base": server.base_url},
        )
    assert reward == 0.0
    assert "NL judge failed 3 time(s)" in info["judge_error"] and "not JSON" in info["judge_error"]
    assert info["note"] == info["judge_error"] and info["nl_assertions"] is None


def test_a_hosted_judge_without_credentials_fails_at_construction(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="NL judge"):
        gym.make("AirlineScripted-v0", task="0", reward_basis="NL_ASSERTION")


# --- eval, regrade, audit --------------------------------------------------------------------
def test_eval_records_the_basis_and_grades_on_it(tmp_path: Path) -> None:
    out = tmp_path / "noop.json"
    ids = [READ_ONLY_WITH_ACTIONS, NO_GOLD_ACTIONS[0]]
    code, _, err = run(
        "eval",
        "--agent",
        "noop",
        "--task-ids",
        ",".join(ids),
        "--reward-basis",
        "DB,ACTION",
        "--out",
        str(out),
        "--json",
    )
    assert code == 0, err
    results = json.loads(out.read_text())
    assert results["info"]["reward_basis"] == ["DB", "ACTION"]
    rewards = {s["task_id"]: s["reward_info"]["reward"] for s in results["simulations"]}
    assert rewards == {READ_ONLY_WITH_ACTIONS: 0.0, NO_GOLD_ACTIONS[0]: 1.0}
    for sim in results["simulations"]:
        assert sim["reward_info"]["reward_basis"] == ["DB", "ACTION"]
    # resuming with another basis would mix two gradings in one file
    code, _, err = run(
        "eval", "--agent", "noop", "--task-ids", ",".join(ids), "--out", str(out), "--resume"
    )
    assert code == 2 and "--reward-basis" in err


def test_eval_without_a_basis_records_none(tmp_path: Path) -> None:
    out = tmp_path / "noop.json"
    evaluate("noop", EvalConfig(task_ids=["0"]), out=out)
    assert "reward_basis" not in json.loads(out.read_text())["info"]


@pytest.mark.parametrize("command", ["eval", "regrade", "audit"])
def test_bad_basis_is_one_line_and_exit_2(command: str, tmp_path: Path) -> None:
    args = {
        "eval": ["--agent", "noop", "--out", str(tmp_path / "x.json")],
        "regrade": [str(Path(__file__))],
        "audit": [],
    }[command]
    code, _, err = run(command, *args, "--reward-basis", "DB,SPEED")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "SPEED" in lines[0], err


def test_regrade_on_another_basis(tmp_path: Path) -> None:
    out = tmp_path / "noop.json"
    evaluate("noop", EvalConfig(task_ids=[READ_ONLY_WITH_ACTIONS, "1"]), out=out)
    code, stdout, _ = run("regrade", str(out), "--json", "--reward-basis", "ACTION")
    rows = {r["task_id"]: r for r in map(json.loads, stdout.splitlines())}
    assert code == 0  # another basis than the recorded one's: only failures disagree
    assert rows[READ_ONLY_WITH_ACTIONS]["recorded_reward"] == 1.0
    assert rows[READ_ONLY_WITH_ACTIONS]["reward"] == 0.0
    assert rows[READ_ONLY_WITH_ACTIONS]["reward_basis"] == ["ACTION"]
    with OpenAIServer(judge_says(True, TASKS)) as server:
        code, stdout, err = run(
            "regrade",
            str(out),
            "--json",
            "--reward-basis",
            "NL_ASSERTION",
            "--judge-model",
            "openai/j",
            "--judge-api-base",
            server.base_url,
        )
    assert code == 0, err
    rows = {r["task_id"]: r for r in map(json.loads, stdout.splitlines())}
    assert rows["1"]["reward"] == 1.0 and len(rows["1"]["nl_assertions"]) == len(
        TASKS["1"].nl_assertions
    )


def test_audit_counts_per_basis() -> None:
    with OpenAIServer(judge_says(False, TASKS)) as server:
        code, stdout, err = run(
            "audit",
            "--json",
            "--reward-basis",
            "DB,COMMUNICATE",
            "--reward-basis",
            "ACTION",
            "--reward-basis",
            "DB,NL_ASSERTION",
            "--judge-model",
            "openai/j",
            "--judge-api-base",
            server.base_url,
        )
        asked = len(server.requests)
    assert code == 0, err
    record = json.loads(stdout)
    counts = {tuple(b["reward_basis"]): b["counts"] for b in record["by_basis"]}
    assert record["passed"]["noop"] == NOOP_PASSES
    assert counts[("DB", "COMMUNICATE")] == record["counts"]
    assert counts[("ACTION",)]["noop"] == len(NO_GOLD_ACTIONS)
    assert counts[("ACTION",)]["gold"] == len(TASKS)
    assert counts[("DB", "NL_ASSERTION")] == {"noop": 0, "transfer": 0, "gold": 0}
    assert asked == 3 * len(TASKS)  # every task has assertions: one request per episode


def test_audit_table_has_a_row_per_basis() -> None:
    code, stdout, _ = run("audit", "--reward-basis", "ACTION", "--reward-basis", "DB")
    assert code == 0
    assert stdout.splitlines()[0].split() == ["reward", "basis", "noop", "transfer", "gold"]
    rows = {line.split()[0]: line.split()[1:] for line in stdout.splitlines()[2:]}
    assert rows["ACTION"][0] == f"{len(NO_GOLD_ACTIONS)}/{len(TASKS)}"
    assert rows["own"][-3:] == [f"{len(NOOP_PASSES)}/{len(TASKS)}", *rows["own"][-2:]]


def test_tasks_own_basis_is_recorded_in_results_reward_info(tmp_path: Path) -> None:
    """Not a run_info key unless asked; each simulation's reward_info still names its basis."""
    out = tmp_path / "gold.json"
    evaluate("gold", EvalConfig(task_ids=["1"]), out=out)
    sim = json.loads(out.read_text())["simulations"][0]
    assert sim["reward_info"]["reward_basis"] == ["DB", "COMMUNICATE"]
    assert sim["reward_info"]["nl_assertions"] is None


def test_the_judge_uses_the_customer_reply_cache(tmp_path: Path) -> None:
    """Run twice with one cache file: the second run's judge request is answered from it."""
    judge = judge_says(True, TASKS)

    def respond(body: dict[str, Any]) -> Reply:
        if "expectedOutcome" in body["messages"][0]["content"]:
            return judge(body)
        return Reply("I would like to know my options.")

    rewards = []
    with OpenAIServer(respond) as server:
        for _ in range(2):
            env = gym.make(
                "Airline-v0",
                task=READ_ONLY_WITH_ACTIONS,
                user_model="openai/customer",
                user_llm_args={"api_base": server.base_url},
                user_cache=tmp_path / "replies.sqlite",
                reward_basis="NL_ASSERTION",
                judge="openai/judge",
                judge_llm_args={"api_base": server.base_url},
            )
            env.reset(seed=0)
            rewards.append(env.step(_done())[1])
        bodies = [r["messages"][0]["content"] for r in server.requests]
    assert rewards == [1.0, 1.0]
    assert sum("expectedOutcome" in b for b in bodies) == 1  # the judge, once
    assert len(bodies) == 2  # and the customer's opening message, once


def test_the_rewards_page_table_is_what_audit_measures() -> None:
    """docs/rewards.md's "who passes what" table under each basis, row by row, from ``audit``."""
    from airline_gym.cli.audit import audit_bases

    page = Path(__file__).resolve().parents[2] / "docs" / "rewards.md"
    readme = page.read_text(encoding="utf-8")
    section = readme[readme.index("## Reward bases beyond") :]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| own (") or line.startswith("| DB") or line.startswith("| COMM")
        or line.startswith("| ACTION")
    ][:6]  # fmt: skip
    bases = [None if r[0].startswith("own") else tuple(r[0].split(",")) for r in rows]
    measured = audit_bases(bases=[b for b in bases if b is not None])
    assert len(rows) == 6
    for basis, row in zip(bases, rows, strict=True):
        counts = measured[basis]
        assert row[1:] == [f"{len(counts[n])}/50" for n in ("noop", "transfer", "gold")], row


def test_a_task_whose_own_basis_has_nl_assertion_is_graded_by_the_given_judge(
    tmp_path: Path,
) -> None:
    """The load-time check (``check_gradable``) refuses such a task without a judge; with one
    the task's own basis is scored, and a run's own basis replaces the task's."""
    record = TASKS[READ_ONLY_WITH_ACTIONS].raw
    record["evaluation_criteria"]["reward_basis"] = ["DB", "NL_ASSERTION"]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    with pytest.raises(ConfigError, match="needs a judge model"):
        gym.make("AirlineScripted-v0", tasks=str(path))
    with pytest.raises(ConfigError, match="reward_basis includes NL_ASSERTION"):
        check_gradable(TASKS, "tau2", None, ("DB", "NL_ASSERTION"))
    check_gradable(load_task_set(path), "mine", None, ("DB",))  # the run's basis wins
    # DB alone: no judge needed, whatever the task says
    reward, info, _ = _noop_episode(record["id"], tasks=str(path), reward_basis="DB")
    assert reward == 1.0 and info["breakdown"] == {"DB": 1.0}
    with OpenAIServer(judge_says(False, TASKS)) as server:
        reward, info, _ = _noop_episode(
            record["id"],
            tasks=str(path),
            judge="openai/judge",
            judge_llm_args={"api_base": server.base_url},
        )
    assert reward == 0.0 and info["breakdown"] == {"DB": 1.0, "NL_ASSERTION": 0.0}


def test_concurrent_eval_awaits_the_judge_and_grades_every_episode(tmp_path: Path) -> None:
    """With --concurrency the env is stepped on an event loop: the judge is awaited there."""
    from airline_gym.env.judge import make_judge

    out = tmp_path / "gold.json"
    ids = ["1", "5", "7"]
    with OpenAIServer(judge_says(True, TASKS)) as server:
        judge = make_judge("openai/judge", {"api_base": server.base_url})
        config = EvalConfig(
            task_ids=ids, concurrency=3, reward_basis=("DB", "NL_ASSERTION"), judge=judge
        )
        evaluate("gold", config, out=out)
        asked = len(server.requests)
    results = json.loads(out.read_text())
    assert asked == len(ids)
    assert results["info"]["reward_basis"] == ["DB", "NL_ASSERTION"]
    assert results["info"]["judge_info"] == {"llm": "openai/judge"}
    for sim in results["simulations"]:
        info = sim["reward_info"]
        assert info["reward"] == 1.0 and info["reward_breakdown"] == {
            "DB": 1.0,
            "NL_ASSERTION": 1.0,
        }
        assert len(info["nl_assertions"]) == len(TASKS[sim["task_id"]].nl_assertions)


def test_the_async_env_step_grades_with_the_judge() -> None:
    import asyncio

    async def episode(url: str) -> tuple[float, dict[str, Any]]:
        env = gym.make(
            "AirlineScripted-v0",
            task=READ_ONLY_WITH_ACTIONS,
            reward_basis="NL_ASSERTION",
            judge="openai/judge",
            judge_llm_args={"api_base": url},
        ).unwrapped
        await env.areset(seed=0)
        _, reward, _, _, info = await env.astep(_done())
        return reward, info["reward_info"]

    with OpenAIServer(judge_says(False, TASKS)) as server:
        reward, info = asyncio.run(episode(server.base_url))
        assert len(server.requests) == 1
    assert reward == 0.0 and info["breakdown"] == {"NL_ASSERTION": 0.0}
    assert all(not c["met"] for c in info["nl_assertions"])


def test_regrade_counts_a_judge_reply_nested_too_deep_as_a_judge_failure(tmp_path: Path) -> None:
    """JSON nested 200,000 deep (json.loads: RecursionError) is a bad verdict: asked 3 times,
    then the judge's failure is the row's cause; the simulation was replayed."""
    out = tmp_path / "noop.json"
    evaluate("noop", EvalConfig(task_ids=["0", "1"]), out=out)
    nested = "[" * 200_000 + "]" * 200_000
    with OpenAIServer(default=Reply(nested)) as server:
        code, stdout, err = run(
            "regrade", str(out), "--json", "--reward-basis", "NL_ASSERTION",
            "--judge-model", "openai/j", "--judge-api-base", server.base_url,
        )  # fmt: skip
        asked = len(server.requests)
    assert "could not be replayed" not in err and code != 2, err
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert [r["task_id"] for r in rows] == ["0", "1"] and asked == 6
    cause = "NL judge failed 3 time(s); last: the reply is JSON nested too deep"
    assert all(r["note"].startswith(cause) and r["reward"] == 0.0 for r in rows), rows
