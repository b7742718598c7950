"""First-time and pipe use of the CLI: help text, --version, broken pipes, key hints (11.13-16)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from optional_libs import missing

from airline_gym import __version__
from airline_gym.cli import tasks as tasks_command
from airline_gym.cli.main import COMMANDS, main
from airline_gym.harness.evaluate import EvalConfig, evaluate
from tests.conftest import need_shared_tau3

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ANSI = re.compile(r"\x1b\[")


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        env=ENV,
    )


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "gold.json"
    evaluate("gold", EvalConfig(task_ids=["0", "2", "3", "17"]), out=path)
    return path


# --- 14: a reader that goes away -------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [["tasks"], ["tasks", "--json"], ["show", "17"], ["regrade", "--json"], ["compare"]],
    ids=["tasks", "tasks --json", "show", "regrade --json", "compare"],
)
def test_closed_pipe_exits_quietly_with_status_0(args: list[str], results_file: Path) -> None:
    if args[0] == "regrade":
        args = [*args, str(results_file)]
    if args[0] == "compare":
        args = [*args, str(results_file), str(results_file)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "airline_gym.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like 'head' exiting before the command writes
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=180) == 0, err
    assert err == ""


# --- 16: help text ---------------------------------------------------------------------------
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_has_no_rst_markup_or_spec_references(command: str | None) -> None:
    done = cli(*([command] if command else []), "--help")
    assert done.returncode == 0
    assert "``" not in done.stdout
    assert not re.search(r"\bspec\b|§|subcommand lives|own module", done.stdout), done.stdout


def test_version_flag() -> None:
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"airline-gym {__version__}"


EXAMPLES = [
    shlex.split(line.strip())[2:]
    for line in (tasks_command.__doc__ or "").splitlines()
    if line.strip().startswith("airline-gym tasks") and "--tasks" not in line
]


@pytest.mark.parametrize("args", EXAMPLES, ids=[" ".join(a) or "(none)" for a in EXAMPLES])
def test_every_tasks_example_finds_tasks(args: list[str], capsys: pytest.CaptureFixture) -> None:
    if "tau3" in args:
        need_shared_tau3()
    assert main(["tasks", *args]) == 0
    out = capsys.readouterr().out
    if "--json" in args:
        assert out.strip() not in ("", "[]")
    else:
        found = re.search(r"^(\d+) of \d+ tasks", out, re.MULTILINE)
        assert found and int(found.group(1)) > 0, out


def test_play_accepts_no_colour_like_demo() -> None:
    for flag in ("--no-colour", "--no-color"):
        done = cli("play", "--task", "17", flag, stdin=":done\n")
        assert done.returncode == 0, done.stderr
        assert "reward" in done.stdout.lower() and not ANSI.search(done.stdout)


# --- 13: the key hint names the CLI's way out ------------------------------------------------
@pytest.mark.parametrize("command", ["eval", "demo"])
def test_agent_model_without_a_key_hints_the_cli_fix(
    command: str, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main([command, "--agent-model", "gpt-4.1"]) == 2
    err = capsys.readouterr().err
    assert "--agent gold" in err and "--agent noop" in err and "--agent-api-base" in err
    assert 'user="scripted"' not in err and "api_base=" not in err


# --- 18: long work shows progress ------------------------------------------------------------
def test_bench_reports_progress_on_stderr_and_keeps_stdout_json() -> None:
    done = cli("bench", "--repeat", "2", "--json")
    assert done.returncode == 0, done.stderr
    import json

    figures = json.loads(done.stdout)
    assert figures["get_user_details_s"] > 0 and figures["memory_per_live_episode_bytes"] > 0
    assert "airline-gym bench: domain figures (1 of 2)" in done.stderr
    assert "airline-gym bench: env figures (2 of 2)" in done.stderr
    assert "airline-gym bench: done after" in done.stderr


@pytest.mark.slow  # ~1-3 min: it imports and runs the reference
@pytest.mark.reference
def test_bench_vs_reference_reports_each_figure() -> None:
    from airline_gym.testing.bench_reference import reference_missing

    if reference_missing() is not None:
        missing("the reference (tau2) is not installed")
    args = ["--repeat", "1", "--gold-tasks", "1", "--live-envs", "1"]
    done = cli("bench", "--vs-reference", *args, "--reference-live-envs", "1", "--json")
    assert done.returncode in (0, 1), done.stderr
    progress = [ln for ln in done.stderr.splitlines() if ln.startswith("airline-gym bench")]
    assert len(progress) >= 5 and progress[-1].startswith("airline-gym bench --vs-reference: ")
    assert any(": done" in ln and "after" not in ln for ln in progress)


# --- 21: named loggers, quiet by default -----------------------------------------------------
def test_logging_is_quiet_by_default_and_shown_with_verbose(tmp_path: Path, tau2_tasks) -> None:
    import json

    record = tau2_tasks["17"].raw
    record["id"] = "mine"
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([record]))
    quiet = cli("tasks", "--tasks", str(path), "--json")
    assert quiet.returncode == 0 and quiet.stderr == ""
    loud = cli("-v", "tasks", "--tasks", str(path), "--json")
    assert loud.returncode == 0
    assert "INFO airline_gym.domain.tasks:" in loud.stderr and "one split, base" in loud.stderr
    debug = cli("-vv", "show", "17")
    assert "DEBUG airline_gym.domain.tasks: loaded 50 tasks" in debug.stderr


def test_library_warnings_stay_silent_until_logging_is_configured() -> None:
    code = (
        "import logging, airline_gym\n"
        "logging.getLogger('airline_gym.llm.client').warning('should not show')\n"
        "logging.basicConfig()\n"
        "logging.getLogger('airline_gym.llm.client').warning('now it shows')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert "should not show" not in done.stderr and "now it shows" in done.stderr


def test_modules_with_something_to_say_have_named_loggers() -> None:
    import importlib

    for name in (
        "airline_gym.data",
        "airline_gym.domain.tasks",
        "airline_gym.domain.database",
        "airline_gym.env.airline_env",
        "airline_gym.llm.client",
    ):
        assert importlib.import_module(name).log.name == name
