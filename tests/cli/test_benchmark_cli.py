"""``--benchmark tau3`` on the commands: tasks, show, eval, regrade (the tau3 leaderboard runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airline_gym.domain.tools import TOOL_TYPES
from tests.cli.test_cli import cli
from tests.conftest import SHARED

pytestmark = pytest.mark.usefixtures("tau3")
T3NEW = sorted((SHARED / "trajectories").glob("t3new__*.json"))


def test_regrade_agrees_with_every_recorded_tau3_reward() -> None:
    assert T3NEW
    done = cli("regrade", "--benchmark", "tau3", "--json", *map(str, T3NEW))
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 50 * len(T3NEW)
    assert all(r["agrees"] and r["benchmark"] == "tau3" for r in records)
    assert all(r["recorded_reward"] is not None for r in records)
    assert f"agreement: {len(records)}/{len(records)} simulations" in done.stderr
    for path in T3NEW:
        assert f"{path}: benchmark tau3 (recognised from the file's tasks)" in done.stderr


def test_regrade_takes_the_version_from_the_file_and_says_so(tmp_path: Path) -> None:
    data = json.loads(T3NEW[0].read_text())
    bare = tmp_path / "bare.json"  # simulations only: the file cannot tell its version
    bare.write_text(json.dumps(data["simulations"]))
    told = cli("regrade", "--benchmark", "tau3", str(bare))
    assert told.returncode == 0, told.stderr[-2000:]
    assert "benchmark tau3 (as --benchmark says (the file does not tell))" in told.stderr
    default = cli("regrade", str(bare))
    assert default.returncode == 1  # graded against the tau2 tasks: some disagree
    assert (
        "benchmark tau2 (the default (the file does not tell)); if it is a tau3 run, pass "
        "--benchmark tau3" in default.stderr
    )
    wrong = cli("regrade", "--benchmark", "tau2", str(T3NEW[0]))
    assert wrong.returncode == 0  # the file's own tasks win, and the version with them
    assert "benchmark tau3 (recognised from the file's tasks, not --benchmark tau2)" in wrong.stderr


def test_tasks_and_show_list_the_tau3_tasks() -> None:
    listed = json.loads(cli("tasks", "--benchmark", "tau3", "--json").stdout)
    assert len(listed) == 50
    tau2 = json.loads(cli("show", "7", "--json").stdout)
    tau3 = json.loads(cli("show", "7", "--benchmark", "tau3", "--json").stdout)
    cabins = [
        [a["arguments"].get("cabin") for a in t["actions"] if a["name"].startswith("update")]
        for t in (tau2, tau3)
    ]
    assert cabins == [["economy"], ["business"]]  # spec 9.4, task 7
    assert "task 7 (tau3;" in cli("show", "7", "--benchmark", "tau3").stdout
    refused = cli("show", "7", "--benchmark", "tau2", "--tasks", "tau3")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "choose the version with benchmark 'tau3'" in refused.stderr


def test_eval_records_the_version_and_resume_keeps_it(tmp_path: Path) -> None:
    out = tmp_path / "gold.json"
    done = cli("eval", "--agent", "gold", "--benchmark", "tau3", "--task-ids", "2,7", "--out",
               str(out), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert results["info"]["benchmark"] == "tau3" and results["info"]["task_set"] == "tau3"
    assert [s["reward_info"]["reward"] for s in results["simulations"]] == [1.0, 1.0]
    checks = [c for s in results["simulations"] for c in s["reward_info"]["action_checks"]]
    assert all(c["tool_type"] == TOOL_TYPES[c["action"]["name"]] for c in checks)  # tau3's field
    assert {c["tool_type"] for c in checks} >= {"read", "write"}
    summary = json.loads(done.stdout)
    assert summary["benchmark"] == "tau3" and summary["infrastructure_errors"] == 0
    again = cli("eval", "--agent", "gold", "--task-ids", "2,7", "--out", str(out), "--resume")
    assert again.returncode == 2
    assert "it was run with --benchmark tau3, this run has tau2" in again.stderr


def test_demo_plays_the_tau3_task_with_benchmark_tau3() -> None:
    tau2, tau3 = cli("demo", "--task", "7"), cli("demo", "--task", "7", "--benchmark", "tau3")
    assert tau2.returncode == tau3.returncode == 0, tau3.stderr
    assert tau2.stdout.rstrip().endswith("reward=1.0") and tau3.stdout.rstrip().endswith(
        "reward=1.0"
    )
    # task 7's upgrade: economy in tau2, business in tau3 (spec 9.4)
    upgrade = 'update_reservation_flights(reservation_id="XEHM4B", cabin='
    assert f'{upgrade}"economy"' in tau2.stdout and f'{upgrade}"business"' not in tau2.stdout
    assert f'{upgrade}"business"' in tau3.stdout


def _one_customer_turn(task_id: str, text: str) -> dict[str, object]:
    turns = [("assistant", "Hi! How can I help you today?"), ("user", text)]
    messages = [{"role": r, "content": c, "tool_calls": None} for r, c in turns]
    return {"id": "s1", "task_id": task_id, "trial": 0, "messages": messages}


def test_audit_user_reads_a_tau3_file_against_tau3s_scenarios(tmp_path: Path) -> None:
    # tau3's task 18 withholds the payment method (tau2's withholds nothing): a payment id the
    # customer states unprompted is a leak against tau3's scenario, an invention against tau2's
    sim = _one_customer_turn("18", "Please refund it to credit_card_9999999.")
    recorded = tmp_path / "tau3_run.json"  # no embedded tasks; the info records tau3
    recorded.write_text(json.dumps({"info": {"benchmark": "tau3"}, "simulations": [sim]}))
    bare = tmp_path / "bare.json"  # tells nothing: --benchmark decides, else tau2
    bare.write_text(json.dumps([sim]))

    def kinds(*args: str) -> tuple[list[str], str]:
        done = cli("audit-user", "--json", *args)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)["files"][0]["results"]
        return [flag["kind"] for r in results for flag in r["user_audit"]], done.stderr

    flagged, said = kinds(str(recorded))
    assert flagged == ["leak"]
    assert f"{recorded}: scenarios of benchmark tau3 (recorded in the file's info)" in said
    assert kinds(str(bare), "--benchmark", "tau3")[0] == ["leak"]
    flagged, said = kinds(str(bare))
    assert flagged == ["invention"] and "benchmark tau2 (the default" in said
    refused = cli("audit-user", str(recorded), "--tasks", "tau2")
    assert refused.returncode == 2 and "belongs to benchmark 'tau2', not 'tau3'" in refused.stderr
