"""``airline-gym audit-user`` on crafted and real results files, and the audit in ``eval``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from test_cli import assert_one_line_error, cli

from airline_gym.domain.user_audit import AUDIT_KINDS
from airline_gym.harness.results import Results
from airline_gym.harness.user_audit import audit_file, audit_summary
from airline_gym.testing import OpenAIServer, Reply

_HERE = Path(__file__).resolve()
SHARED = next((p / "shared" for p in _HERE.parents if (p / "shared").is_dir()), _HERE / "absent")
TRAJECTORIES = SHARED / "trajectories"
TOOLORCHESTRA_FIX = TRAJECTORIES / "t2old__lb-nvidia-toolorchestra__task_id_fix.json"

SCENARIO = {
    "persona": None,
    "instructions": {
        "domain": "airline",
        "reason_for_call": "You want to cancel reservation EHGLP3.",
        "known_info": "You are Emma Kim.\nYour user id is emma_kim_9957.",
        "unknown_info": None,
        "task_instructions": "You want a full refund.",
    },
}


def message(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content, "tool_calls": None}


def sim(sim_id: str, task_id: str, *turns: str) -> dict[str, Any]:
    """A simulation whose messages alternate agent, customer, agent, ... from ``turns``."""
    roles = ["assistant", "user"]
    messages = [message(roles[i % 2], text) for i, text in enumerate(turns)]
    return {"id": sim_id, "task_id": task_id, "trial": 0, "messages": messages}


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    """Three simulations of task 0: clean, invention + role break, premature stop."""
    confirm = "I will cancel EHGLP3 now. Do you confirm you want me to proceed?"
    sims = [
        sim("clean", "0", "Hi!", "Cancel EHGLP3 please.", "It is not refundable.", "###STOP###"),
        sim("made-up", "0", "Hi!", "How can I help you? I'm zed_fake_1234.", "Who?"),
        sim("hung-up", "0", "Hi!", "Cancel EHGLP3.", confirm, "Yes ###STOP###"),
    ]
    path = tmp_path / "run.json"
    tasks = [{"id": "0", "user_scenario": SCENARIO}]
    path.write_text(json.dumps({"info": {}, "tasks": tasks, "simulations": sims}))
    return path


def test_the_table_counts_per_kind_and_file_and_lists_the_flagged_turns(results_file):
    done = run_cli("audit-user", str(results_file))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["file", "sims", *AUDIT_KINDS]
    total = next(line for line in lines if line.startswith("total")).split()
    assert total == ["total", "3", "1", "0", "1", "1", "0", "0"]
    flagged = [line for line in lines if line.startswith(str(results_file))][1:]
    assert [line.split()[5] for line in flagged] == ["invention", "role_break", "premature_stop"]
    assert "user id zed_fake_1234: How can I help you?" in flagged[0]
    assert lines[-1] == (
        "2 of 3 simulations flagged: premature_stop 1, leak 0, invention 1, role_break 1, "
        "empty_or_repeated 0, unwarranted_transfer 0"
    )


def test_json_gives_every_simulations_flags_under_user_audit(results_file):
    done = run_cli("audit-user", str(results_file), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (one,) = report["files"]
    flags = {r["simulation_id"]: r["user_audit"] for r in one["results"]}
    assert flags["clean"] == []
    assert flags["hung-up"] == [
        {"kind": "premature_stop", "message_index": 3, "evidence": "Yes ###STOP###"}
    ]
    assert [f["kind"] for f in flags["made-up"]] == ["invention", "role_break"]
    assert one["counts"]["invention"] == 1 and one["rates"]["invention"] == pytest.approx(1 / 3)
    assert report["total"]["flagged_simulations"] == 2 and report["total"]["audited"] == 3


def test_a_simulation_without_a_scenario_is_listed_not_audited_and_exit_is_1(tmp_path):
    path = tmp_path / "odd.json"
    sims = [sim("s1", "0", "Hi!", "Hello."), sim("s2", "99", "Hi!", "Hello.")]
    tasks = [{"id": "0", "user_scenario": SCENARIO}]
    path.write_text(json.dumps({"tasks": tasks, "simulations": sims}))
    done = run_cli("audit-user", str(path))
    assert done.returncode == 1
    assert "simulation s2 not audited: no task '99'" in done.stderr
    assert next(ln for ln in done.stdout.splitlines() if ln.startswith("total")).split()[1] == "1"


def test_a_file_without_tasks_uses_the_task_set_and_a_task_id_map_relabels(tmp_path):
    # task 0 of the default set is Emma Kim's (emma_kim_9957); task 1 is Raj Sanchez's
    path = tmp_path / "bare.json"
    path.write_text(json.dumps([sim("s1", "1", "Hi!", "I am emma_kim_9957.")]))
    assert [f["kind"] for f in audit_file(path).simulations[0].flags] == ["invention"]
    assert audit_file(path, task_id_map={"s1": "0"}).simulations[0].flags == []
    id_map = tmp_path / "map.json"
    id_map.write_text(json.dumps({"by_simulation_id": {"s1": {"recovered_task_id": "0"}}}))
    done = run_cli("audit-user", str(path), "--task-id-map", str(id_map), "--json")
    assert json.loads(done.stdout)["total"]["flagged_simulations"] == 0


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (None, "no such results file"),
        ("{not json", "not valid JSON"),
        ('{"simulations": 3}', "not a results file"),
        ('{"simulations": [{"task_id": "0", "trial": 0}]}', "no 'messages'"),
        ('{"simulations": [{"task_id": true, "messages": []}]}', "'task_id' must be"),
    ],
)
def test_bad_files_are_one_line_errors_with_exit_2(tmp_path, content, text):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    assert_one_line_error(run_cli("audit-user", str(path)), 2, text)


def test_a_bad_task_id_map_and_an_unreadable_file_are_one_line_errors(results_file, tmp_path):
    bad_map = tmp_path / "map.json"
    bad_map.write_text("[1, 2]")
    done = run_cli("audit-user", str(results_file), "--task-id-map", str(bad_map))
    assert_one_line_error(done, 2, "expected a JSON object")
    if os.geteuid() != 0:  # root reads anything
        results_file.chmod(0)
        assert_one_line_error(run_cli("audit-user", str(results_file)), 2, "Permission denied")


# --- the audit in eval -----------------------------------------------------------------------
def test_eval_with_the_llm_customer_records_and_summarises_the_audit(tmp_path):
    """The customer (a scripted local model) greets as the agent and gives a made-up user id."""
    first = Reply("How can I help you today? My user id is zed_fake_1234.")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    with OpenAIServer(default=first) as server:
        runs = {}
        for form in ("--json", "--quiet-table"):
            out = tmp_path / f"run{form}.json"
            args = ["eval", "--agent", "noop", "--user-model", "openai/user", "--user-api-base",
                    server.base_url, "--task-ids", "0,1", "--out", str(out)]  # fmt: skip
            if form == "--json":
                args.append("--json")
            runs[form] = (cli(*args, env={**env, "OPENAI_API_KEY": ""}), out)
    done, out = runs["--json"]
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])["user_audit"]
    assert summary["simulations"] == 2 and summary["flagged_simulations"] == 2
    assert summary["counts"]["invention"] == 2 and summary["counts"]["role_break"] == 2
    assert {f["task_id"] for f in summary["flags"]} == {"0", "1"}
    for record in Results.load(out).simulations:
        kinds = [(f["kind"], f["message_index"]) for f in record["user_audit"]]
        assert kinds == [("invention", 1), ("role_break", 1)]
        assert record["messages"][1]["role"] == "user"
    # the file's flags are what audit-user finds in it
    assert audit_summary(Results.load(out).simulations) == summary
    text, _ = runs["--quiet-table"]
    assert "customer audit: 2 of 2 simulations flagged: premature_stop 0, leak 0, invention 2" in (
        text.stdout
    )
    assert "task 0 trial 0 message 1 invention: user id zed_fake_1234" in text.stdout


def test_eval_with_the_scripted_customer_records_no_audit(tmp_path):
    out = tmp_path / "scripted.json"
    done = cli("eval", "--agent", "noop", "--task-ids", "0", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    assert "user_audit" not in json.loads(done.stdout.splitlines()[-1])
    assert all("user_audit" not in s for s in Results.load(out).simulations)


# --- the shared real runs --------------------------------------------------------------------
#: What audit-user finds on the real runs (the README's table): file -> non-zero counts.
SHARED_COUNTS: dict[str, dict[str, int]] = {
    "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json": {"premature_stop": 1},
    "t2old__lb-distyl-button__claude-opus-4-6__user-gpt-4.1.json": {"premature_stop": 3},
    "t2old__lb-ironshell__llm_agent-claude-opus-4-6__user-gpt-4.1.json": {"premature_stop": 2},
    "t2old__lb-ironshell__llm_agent-gpt-5.4__user-gpt-4.1.json": {},
    "t2old__lb-nvidia-toolorchestra__orchestrator__user-gpt-5.json": {"premature_stop": 2},
    "t2old__lb-openai__gpt-oss-120b-langchain__user-gpt-oss-120b.json": {
        "premature_stop": 2,
        "invention": 2,
        "role_break": 6,
        "empty_or_repeated": 1,
    },
    "t3new__sierra-pr448__whissle__user-gpt-4o.json": {
        "role_break": 1,
        "unwarranted_transfer": 1,
    },
}


def test_audit_user_on_the_shared_real_runs_finds_the_recorded_counts():
    if not TRAJECTORIES.is_dir():
        if os.environ.get("CI"):
            pytest.fail("../shared/trajectories is absent under CI")
        pytest.skip("../shared/trajectories is absent")
    files = [str(TRAJECTORIES / name) for name in SHARED_COUNTS]
    done = run_cli("audit-user", *files, "--task-id-map", str(TOOLORCHESTRA_FIX), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    found = {
        Path(f["path"]).name: {k: n for k, n in f["counts"].items() if n} for f in report["files"]
    }
    assert found == SHARED_COUNTS
    assert report["total"]["audited"] == report["total"]["simulations"] == 344
    assert report["total"]["flagged_simulations"] == 18
