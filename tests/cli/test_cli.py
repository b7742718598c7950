"""Every ``airline-gym`` command as a subprocess: output, exit code, and one-line errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from airline_gym.cli.main import COMMANDS, build_parser, main
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.testing import OpenAIServer, Reply

_HERE = Path(__file__).resolve()
_SHARED = next((p / "shared" for p in _HERE.parents if (p / "shared").is_dir()), _HERE)
TAU3 = _SHARED / "reference" / "tau3-airline-tasks.json"
COMMUNICATE_TASKS = ["3", "7", "11", "14", "18", "23"]  # spec 9.3: six tasks use communicate


def cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None):
    """Run ``python -m airline_gym.cli ARGS``; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})},
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    """Exit ``code``, and stderr is exactly one line naming the problem, no traceback."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == code, (done.returncode, done.stderr)
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert lines[0].startswith("airline-gym"), lines[0]
    assert text in lines[0], lines[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A do-nothing run and a gold run on tasks 0, 2, 3 (results files)."""
    folder = tmp_path_factory.mktemp("runs")
    out = {}
    for agent in ("noop", "gold"):
        out[agent] = folder / f"{agent}.json"
        evaluate(agent, EvalConfig(task_ids=["0", "2", "3"]), out=out[agent])
    return out


def expected_do_nothing_passes(tasks: Any) -> list[str]:
    """Tasks a do-nothing agent must pass, derived independently: no writes, nothing to say."""
    return [
        t.id
        for t in tasks
        if not any(a.name in WRITE_TOOLS for a in t.actions) and not t.communicate_info
    ]


# --- help ------------------------------------------------------------------------------------
def test_top_level_help_lists_every_command():
    done = cli("--help")
    assert done.returncode == 0
    for name in COMMANDS:
        assert name in done.stdout


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_help_has_examples(name):
    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions if a.dest == "command")  # type: ignore[union-attr]
    text = sub.choices[name].format_help()
    assert f"  airline-gym {name}" in text  # at least one example line


def test_unknown_command_is_one_line():
    assert_one_line_error(run_cli("fly"), 2, "invalid choice: 'fly'")


# --- demo ------------------------------------------------------------------------------------
def test_demo_plays_the_gold_solution():
    done = cli("demo", "--task", "17", "--no-colour")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("reward=1.0")
    assert "DB check: match" in done.stdout and "update_reservation" in done.stdout


def test_demo_noop_shows_what_differs():
    done = cli("demo", "--agent", "noop", "--task", "2")
    assert done.returncode == 0 and done.stdout.rstrip().endswith("reward=0.0")
    assert "DB check: DIFFERS" in done.stdout


def test_play_skips_a_line_longer_than_an_action_without_holding_it():
    """A piped 3 MB line is refused in one line, read no further than the action's bound."""
    from airline_gym.env.actions import MAX_ACTION_CHARS

    huge = "x" * (3 * MAX_ACTION_CHARS)
    stdin = "\n".join([huge, "Hello! What can I do for you?", ":done"]) + "\n"
    done = cli("play", "--task", "17", stdin=stdin)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"not sent: a line longer than {MAX_ACTION_CHARS:,} characters" in out
    assert "agent> Hello! What can I do for you?\ncustomer: " in out
    assert "xxxxxxxxxx" not in out


def test_read_line_holds_at_most_the_bound() -> None:

    from airline_gym.cli.play import LineTooLong, read_line

    stream = io.StringIO("abc\n" + "y" * 100 + "\nlast")
    assert read_line(stream, limit=10) == "abc"
    with pytest.raises(LineTooLong):
        read_line(stream, limit=10)
    assert read_line(stream, limit=10) == "last"
    with pytest.raises(EOFError):
        read_line(stream, limit=10)


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--task", "99"], 2, "no task '99'"),
        (["--agent", "smart"], 2, "invalid choice: 'smart'"),
        (["--max-steps", "0"], 2, "--max-steps must be at least 1"),
        (["--tasks", "missing.json"], 2, "tasks file not found"),
    ],
)
def test_demo_bad_arguments(args, code, text):
    assert_one_line_error(run_cli("demo", *args), code, text)


def test_demo_with_an_llm_agent(capsys):
    with OpenAIServer(default=Reply(tool_calls=[{"name": "done", "arguments": {}}])) as server:
        code = main(
            ["demo", "--task", "0", "--agent-model", "openai/agent", "--api-base", server.base_url]
        )
        assert server.requests and server.requests[0]["tools"]
    out = capsys.readouterr().out
    assert code == 0 and out.rstrip().endswith("reward=1.0")


def test_demo_llm_agent_failure_is_one_line(capsys):
    with OpenAIServer(default=Reply(fault="401")) as server:
        code = main(["demo", "--agent-model", "openai/a", "--api-base", server.base_url])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "HTTP 401" in err[0]


# --- eval ------------------------------------------------------------------------------------
def test_eval_prints_a_summary_and_writes_the_file(tmp_path):
    out = tmp_path / "noop.json"
    done = cli("eval", "--agent", "noop", "--task-ids", "0,2", "--trials", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "pass^k: k=1: 0.500  k=2: 0.500" in done.stdout
    assert "terminations: agent_stop 4" in done.stdout
    assert f"results: {out}" in done.stdout
    assert "[4/4] task 2 trial 1: reward 0 (agent_stop); pass 2/4 (50%); " in done.stderr
    assert "ETA 00:00" in done.stderr.splitlines()[-1]
    assert len(json.loads(out.read_text())["simulations"]) == 4


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        ([], 2, "one of the arguments --agent --agent-model/--agent-llm is required"),
        (["--agent", "smart"], 2, "invalid choice: 'smart'"),
        (["--agent", "noop", "--agent-model", "m"], 2, "not allowed with argument"),
        (["--agent", "noop", "--trials", "0"], 2, "--trials must be at least 1"),
        (["--agent", "noop", "--trials", "many"], 2, "invalid int value: 'many'"),
        (["--agent", "noop", "--concurrency", "0"], 2, "--concurrency must be at least 1"),
        (["--agent", "noop", "--task-ids", "0,99"], 2, "no task '99'"),
        (["--agent", "noop", "--task-ids", ","], 2, "--task-ids: no task id"),
        (["--agent", "noop", "--tasks", "missing.json"], 2, "tasks file not found"),
        (["--agent", "noop", "--split", "nope"], 2, "Invalid task split name: 'nope'"),
        (["--agent", "noop", "--resume"], 2, "--resume needs --out"),
        (["--agent", "noop", "--retry-errors"], 2, "--retry-errors needs --resume"),
        (["--agent", "noop", "--user", "scripted", "--user-model", "x"], 2, "need --user llm"),
        (["--agent", "noop", "--api-base", "http://x"], 2, "apply to --agent-model only"),
    ],
)
def test_eval_bad_arguments(args, code, text, tmp_path):
    assert_one_line_error(run_cli("eval", *args), code, text)


def test_eval_refuses_to_overwrite_and_to_resume_something_else(runs, tmp_path):
    copy = tmp_path / "noop.json"
    copy.write_text(runs["noop"].read_text())
    args = ["eval", "--agent", "noop", "--task-ids", "0,2,3", "--out", str(copy)]
    assert_one_line_error(run_cli(*args), 2, "exists: pass --resume")
    assert_one_line_error(
        run_cli(*args, "--resume", "--seed", "5"), 2, "--seed 300, this run has 5"
    )
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    done = cli("eval", "--agent", "noop", "--out", str(broken), "--resume")
    assert_one_line_error(done, 2, "not valid JSON")


def test_eval_without_credentials_fails_before_running(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--agent-model", "gpt-4.1"]) == 2  # a missing credential: bad input
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "OPENAI_API_KEY" in err[0] and "LLM agent cannot run" in err[0]
    assert main(["eval", "--agent", "noop", "--user-model", "gpt-4.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "LLM user simulator cannot run" in err[0]
    assert not (tmp_path / "results").exists()


# --- regrade ---------------------------------------------------------------------------------
def test_regrade_reads_our_results(runs):
    done = cli("regrade", str(runs["noop"]), str(runs["gold"]))
    assert done.returncode == 0, done.stderr
    assert "agreement: 6/6 simulations" in done.stderr


def test_regrade_bad_arguments(tmp_path):
    assert_one_line_error(run_cli("regrade", str(tmp_path / "x.json")), 2, "no such file")
    assert_one_line_error(run_cli("regrade"), 2, "the following arguments are required: FILE")


# --- tasks -----------------------------------------------------------------------------------
def test_tasks_lists_all_fifty():
    done = cli("tasks")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["id", "split", "actions", "writes", "communicate", "purpose"]
    assert lines[-1] == "50 of 50 tasks (tau2)"
    assert sum(1 for line in lines[2:] if line[:4].strip().isdigit()) == 50


def test_tasks_filters(tau2_tasks):
    done = cli("tasks", "--communicate", "--json")
    assert [t["id"] for t in json.loads(done.stdout)] == COMMUNICATE_TASKS
    no_writes = json.loads(cli("tasks", "--writes", "0", "--json").stdout)
    assert {t["id"] for t in no_writes} >= set(expected_do_nothing_passes(tau2_tasks))
    assert all(t["writes"] == 0 for t in no_writes)
    many = json.loads(cli("tasks", "--min-writes", "2", "--split", "test", "--json").stdout)
    assert many and all(t["writes"] >= 2 and "test" in t["splits"] for t in many)
    cancel = json.loads(cli("tasks", "--purpose", "CANCEL", "--json").stdout)
    assert cancel and all("cancel" in t["purpose"].lower() for t in cancel)
    assert len(cancel) < 50


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--split", "nope"], 2, "Invalid task split name"),
        (["--writes", "-1"], 2, "--writes must be >= 0"),
        (["--writes", "1", "--min-writes", "1"], 2, "not allowed with argument"),
        (["--tasks", "nope.json"], 2, "tasks file not found"),
    ],
)
def test_tasks_bad_arguments(args, code, text):
    assert_one_line_error(run_cli("tasks", *args), code, text)


# --- show ------------------------------------------------------------------------------------
def test_show_a_task(tau2_tasks):
    done = cli("show", "17")
    assert done.returncode == 0
    out = done.stdout
    assert out.startswith("task 17 (tau2")
    assert "omar_rossi_1241" in out and "Known info:" in out and "Reason for call:" in out
    for action in tau2_tasks["17"].actions:
        assert action.name in out
    assert "* update_reservation_flights(" in out  # a write, marked
    assert "must communicate:\n  (nothing)" in out
    three = cli("show", "3").stdout
    assert json.dumps(tau2_tasks["3"].communicate_info[0]) in three
    record = json.loads(cli("show", "7", "--json").stdout)
    assert record["id"] == "7" and record["communicate_info"] == list(
        tau2_tasks["7"].communicate_info
    )


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["99"], 2, "no task '99' in task set 'tau2' (ids: 0..49)"),
        (["1", "--tasks", "nope.json"], 2, "tasks file not found"),
        ([], 2, "name the task: airline-gym show TASK (or --task TASK)"),
        (["1", "--task", "2"], 2, "two tasks named (1 and --task 2): name one"),
    ],
)
def test_show_bad_arguments(args, code, text):
    assert_one_line_error(run_cli("show", *args), code, text)


# --- play ------------------------------------------------------------------------------------
def test_playing_the_gold_solution_by_typing_scores_1(tau2_tasks):
    actions = tau2_tasks["17"].actions
    lines = [json.dumps({"name": a.name, "arguments": a.arguments}) for a in actions]
    done = cli("play", "--task", "17", stdin="\n".join(["", ":help", *lines, ":done"]) + "\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("task 17: you are the airline agent")
    assert "customer: " in out and "tool: " in out
    assert "\n  :tools   list the tools" in out  # :help was shown
    assert out.rstrip().endswith("reward=1.0")


def test_play_text_calls_typos_and_end_of_input():
    stdin = "\n".join(
        [
            ":tools",
            "get_user(user_id='x')",
            "get_user_details(user_id='omar_rossi_1241')",
            "{broken",
            ":what",
            "Hello! What can I do for you?",
        ]
    )
    done = cli("play", "--task", "17", stdin=stdin)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "book_reservation(user_id: string" in out  # :tools
    assert "not sent: unknown tool 'get_user'" in out
    assert 'tool: {"user_id": "omar_rossi_1241"' in out
    assert "not sent: not valid JSON" in out
    assert "unknown command ':what'" in out
    assert "agent> Hello! What can I do for you?\ncustomer: " in out
    assert "(end of input: calling done)" in out
    assert "termination: agent_stop" in out and out.rstrip().endswith("reward=0.0")


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--task", "99"], 2, "no task '99'"),
        ([], 2, "the following arguments are required: --task"),
        (["--task", "1", "--user", "scripted", "--user-model", "x"], 2, "need --user llm"),
        (["--task", "1", "--max-steps", "0"], 2, "--max-steps must be at least 1"),
    ],
)
def test_play_bad_arguments(args, code, text):
    assert_one_line_error(run_cli("play", *args, stdin=""), code, text)


# --- audit -----------------------------------------------------------------------------------
def test_audit_finds_exactly_the_do_nothing_passes(tau2_tasks):
    done = cli("audit", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["counts"] == {"noop": 19, "transfer": 19, "gold": 50}
    assert report["passed"]["noop"] == expected_do_nothing_passes(tau2_tasks)
    text = cli("audit").stdout
    assert "noop passes 19/50: 0, 1, 4, 5, 6, 10," in text and "gold passes 50/50" in text


def test_audit_on_the_tau3_tasks(tau3_tasks):
    done = cli("audit", "--benchmark", "tau3", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["benchmark"], report["task_set"], report["tasks"]) == ("tau3", "tau3", 50)
    assert report["counts"]["noop"] == 23 and report["counts"]["gold"] == 50
    assert report["passed"]["noop"] == expected_do_nothing_passes(tau3_tasks)
    assert "noop passes 23/50: 0, 1, 2, 4," in cli("audit", "--benchmark", "tau3").stdout


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--tasks", "nope.json"], 2, "tasks file not found"),
        (["--split", "nope"], 2, "Invalid task split name"),
    ],
)
def test_audit_bad_arguments(args, code, text):
    assert_one_line_error(run_cli("audit", *args), code, text)


# --- compare ---------------------------------------------------------------------------------
def test_compare_two_runs(runs):
    done = cli("compare", str(runs["noop"]), str(runs["gold"]))
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()[5:8]}
    assert rows == {
        "0": ["1/1", "1/1"],
        "2": ["0/1", "1/1", "improved"],
        "3": ["0/1", "1/1", "improved"],
    }
    assert "A: pass^1 0.333  mean reward 0.333" in done.stdout
    assert "B: pass^1 1.000  mean reward 1.000" in done.stdout
    assert "improved (2): 2, 3" in done.stdout and "regressed (0): -" in done.stdout
    data = json.loads(cli("compare", str(runs["gold"]), str(runs["noop"]), "--json").stdout)
    assert data["regressed"] == ["2", "3"] and data["pass_hat_k_b"] == {"1": 1 / 3}
    changed = cli("compare", str(runs["noop"]), str(runs["gold"]), "--changed").stdout
    assert "1/1  1/1" not in changed and changed.count("improved") == 3  # 2 rows + summary


def test_compare_bad_arguments(runs, tmp_path):
    missing = str(tmp_path / "nope.json")
    assert_one_line_error(run_cli("compare", str(runs["noop"]), missing), 2, "no such file")
    broken = tmp_path / "broken.json"
    broken.write_text("[1, 2]")
    assert_one_line_error(run_cli("compare", str(broken), str(runs["noop"])), 2, "simulation 0")
    assert_one_line_error(run_cli("compare", str(runs["noop"])), 2, "required: B.json")


# --- bench -----------------------------------------------------------------------------------
def test_bench_bad_arguments():
    assert_one_line_error(run_cli("bench", "--repeat", "0"), 2, "--repeat must be at least 1")
    assert_one_line_error(run_cli("bench", "--repeat", "x"), 2, "invalid int value")
