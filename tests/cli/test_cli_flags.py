"""The CLI a user meets: each flag means one thing in every command, tau2 run's flag names
work, credential errors name this CLI's flags and exit 2 at once, one exit-code rule in every
``--help``, and a --plot file matplotlib cannot write is refused before the run."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import cli, one_line_error
from optional_libs import require

from airline_gym.cli.main import COMMANDS, build_parser
from airline_gym.testing import OpenAIServer, Reply

NO_KEYS = {name: "" for name in os.environ if name.endswith("_API_KEY")}


def _command_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: sub.choices[name] for name in COMMANDS}


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    parser.format_help()  # loads the command's options
    return {flag: action for action in parser._actions for flag in action.option_strings}


# --- F31: one flag, one meaning -------------------------------------------------------------
#: The flags several commands share, and the one thing (the parsed dest) each means.
SHARED = {
    "--agent-model": "agent_model",
    "--agent-llm": "agent_model",
    "--agent-api-base": "agent_api_base",
    "--api-base": "agent_api_base",
    "--agent-api-key": "agent_api_key",
    "--api-key": "agent_api_key",
    "--user": "user",
    "--user-model": "user_model",
    "--user-llm": "user_model",
    "--user-api-base": "user_api_base",
    "--user-api-key": "user_api_key",
    "--task": "task",
    "--task-ids": "task_ids",
    "--judge-model": "judge_model",
    "--judge-api-base": "judge_api_base",
}


def _help(action: argparse.Action) -> str:
    return re.sub(r"\s*\(default[^)]*\)|, instead of --agent", "", action.help or "")


def test_each_flag_means_one_thing_in_every_command() -> None:
    dests: dict[str, set[str]] = {}
    helps: dict[str, dict[str, str]] = {}
    for name, parser in _command_parsers().items():
        for flag, action in _options(parser).items():
            dests.setdefault(flag, set()).add(action.dest)
            if flag in SHARED and action.help != argparse.SUPPRESS:
                helps.setdefault(flag, {})[name] = _help(action)
    assert {flag: d for flag, d in dests.items() if len(d) > 1} == {}
    assert {flag: dests[flag] for flag in SHARED if flag in dests} == {
        flag: {dest} for flag, dest in SHARED.items() if flag in dests
    }
    said_twice = {flag: set(by.values()) for flag, by in helps.items() if len(set(by.values())) > 1}
    assert said_twice == {}
    # the flags shared by the commands that run an agent or a customer
    for name in ("eval", "demo"):
        options = _options(_command_parsers()[name])
        assert {"--agent-api-base", "--api-base", "--user-api-base", "--user-model"} <= set(options)
    assert "--user-api-base" in _options(_command_parsers()["play"])
    assert "--task" in _options(_command_parsers()["show"])


def test_tau2_runs_flag_names_parse_as_ours() -> None:
    parser = build_parser()
    ours = parser.parse_args(
        shlex.split(
            "eval --agent-model openai/a --agent-api-base http://h/v1 --user-model openai/u "
            "--trials 4 --concurrency 8 --out r.json --task-ids 1,2,3 --split test "
            "--agent-llm-args {} --judge-model j"
        )
    )
    tau2s = parser.parse_args(
        shlex.split(
            "eval --agent-llm openai/a --api-base http://h/v1 --user-llm openai/u --num-trials 4 "
            "--max-concurrency 8 --save-to r.json --task-ids 1 2 3 --task-split-name test "
            "--llm-args {} --judge-llm j"
        )
    )
    assert {k: v for k, v in vars(ours).items() if k != "task_ids"} == {
        k: v for k, v in vars(tau2s).items() if k != "task_ids"
    }
    from airline_gym.cli.flags import task_ids

    assert task_ids(ours.task_ids) == task_ids(tau2s.task_ids) == ["1", "2", "3"]


@pytest.mark.parametrize(
    "flag", ["--agent-api-key", "--api-key", "--user-api-key", "--judge-api-key"]
)
def test_a_key_flag_given_a_variables_name_as_tau2_run_takes_it_is_refused(flag: str) -> None:
    done = cli("eval", "--agent-model", "openai/a", flag, "OPENAI_API_KEY")
    line = one_line_error(done)
    assert "'OPENAI_API_KEY' is a variable's name, not a key" in line
    assert '"$OPENAI_API_KEY"' in line


def test_eval_plays_space_separated_task_ids(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = cli(
        "eval", "--agent", "noop", "--task-ids", "0", "2", "--num-trials", "1", "--save-to", out
    )
    assert done.returncode == 0, done.stderr
    assert sorted(s["task_id"] for s in json.loads(out.read_text())["simulations"]) == ["0", "2"]


@pytest.mark.parametrize("command", ["play", "demo"])
def test_the_customer_is_reached_at_user_api_base_in_play_and_demo(command: str) -> None:
    opening = [Reply(content="Hi, I'd like to check my reservation.")]
    with OpenAIServer(opening, default=Reply(content="Thanks, bye. ###STOP###")) as server:
        args = [command, "--task", "0", "--user-model", "openai/customer"]
        done = cli(*args, "--user-api-base", server.base_url, "--no-colour", env=NO_KEYS)
        assert done.returncode == 0, done.stderr
        assert server.requests and server.requests[0]["model"] == "customer"
    assert "check my reservation" in done.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["play", "--task", "0", "--api-base", "http://127.0.0.1:9/v1"],
            "in play you are the agent",
        ),
        (["demo", "--user-model", "openai/c", "--api-base", "http://127.0.0.1:9/v1"], "apply to"),
        (["eval", "--agent", "noop", "--agent-api-base", "http://127.0.0.1:9/v1"], "apply to"),
    ],
)
def test_the_agents_server_flag_where_no_llm_agent_plays_is_refused(
    args: list[str], says: str
) -> None:
    line = one_line_error(cli(*args))
    assert says in line and "the customer's are --user-api-base/--user-api-key" in line


def test_show_takes_the_task_as_a_flag_too() -> None:
    bare, flagged = cli("show", "17"), cli("show", "--task", "17")
    assert bare.returncode == flagged.returncode == 0, flagged.stderr
    assert flagged.stdout == bare.stdout and flagged.stdout.startswith("task 17 ")


# --- F29: credentials in the CLI's words, one exit-code rule --------------------------------
JUDGE, AGENT, CUSTOMER = "NL judge", "LLM agent", "LLM user simulator"


@pytest.mark.parametrize(
    ("args", "role", "flag"),
    [
        (["audit", "--reward-basis", "DB,NL_ASSERTION"], JUDGE, "--judge-api-base"),
        (["regrade", "FILE", "--reward-basis", "NL_ASSERTION"], JUDGE, "--judge-api-base"),
        (["eval", "--agent", "noop", "--reward-basis", "NL_ASSERTION"], JUDGE, "--judge-api-base"),
        (["eval", "--agent-model", "gpt-4.1"], AGENT, "--agent-api-base"),
        (["eval", "--agent", "noop", "--user-model", "gpt-4.1"], CUSTOMER, "--user-api-base"),
        (["demo", "--agent-model", "gpt-4.1"], AGENT, "--agent-api-base"),
        (["demo", "--user-model", "gpt-4.1"], CUSTOMER, "--user-api-base"),
        (["play", "--task", "0", "--user-model", "gpt-4.1"], CUSTOMER, "--user-api-base"),
        (["serve", "--port", "0", "--user-model", "gpt-4.1"], CUSTOMER, "--user-api-base"),
    ],
)
def test_a_missing_credential_is_bad_input_told_in_the_clis_flags(
    args: list[str], role: str, flag: str, tmp_path: Path
) -> None:
    if args[0] == "serve":
        require("openenv", "uvicorn")
    results = tmp_path / "r.json"
    results.write_text("[]")
    argv = [str(results) if a == "FILE" else a for a in args]
    line = one_line_error(cli(*argv, env=NO_KEYS, cwd=tmp_path), code=2)
    assert f"the {role} cannot run: model " in line and "needs credentials" in line
    assert f"or pass {flag} URL for a local OpenAI-compatible server" in line
    assert "api_base=" not in line and 'user="scripted"' not in line
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--agent-model", "gpt-4.1"],
        ["eval", "--agent-model", "openai/x", "--task-ids", "0"],
        ["play", "--task", "0", "--user-model", "gpt-4.1"],
        ["audit", "--reward-basis", "NL_ASSERTION"],
    ],
)
def test_a_known_providers_missing_key_is_told_before_litellm_loads(
    argv: list[str], tmp_path: Path
) -> None:
    code = (
        "import sys\nfrom airline_gym.cli.main import main\n"
        f"code = main({argv!r})\nprint(code, 'litellm' in sys.modules)"
    )
    env = {**os.environ, **NO_KEYS, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert "needs credentials: set OPENAI_API_KEY" in done.stderr


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("openai/my-model", "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4-20250514", "ANTHROPIC_API_KEY"),
        ("gpt-4.1", "OPENAI_API_KEY"),
        ("gpt-4.1-mini", "OPENAI_API_KEY"),
        ("gpt-4o-mini", "OPENAI_API_KEY"),
    ],
)
def test_the_quick_key_check_says_what_litellm_says(
    model: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airline_gym.llm import load_litellm
    from airline_gym.llm.credentials import surely_missing_key

    monkeypatch.delenv(variable, raising=False)
    litellm = load_litellm()
    assert litellm.validate_environment(model=model)["missing_keys"] == [variable]
    assert surely_missing_key(model, None) == variable
    assert surely_missing_key(model, "sk-given") is None
    monkeypatch.setenv(variable, "sk-set")
    assert litellm.validate_environment(model=model)["keys_in_environment"]
    assert surely_missing_key(model, None) is None


def test_every_commands_help_gives_the_one_exit_code_rule() -> None:
    for name, parser in _command_parsers().items():
        text = parser.format_help()
        rule = text[text.index("exit status:") :]
        assert re.search(r"^  0 +done$", rule, re.MULTILINE), name
        assert re.search(r"^  1 +a failed run", rule, re.MULTILINE), name
        assert re.search(r"^  2 +bad input: .*missing credential", rule, re.MULTILINE | re.DOTALL)
        assert re.search(r"^  130 +interrupted", rule, re.MULTILINE), name


# --- F28: --plot checked before the run -----------------------------------------------------
@pytest.mark.parametrize("name", ["curve.jsn", "folder/curve.png"])
def test_a_plot_file_matplotlib_cannot_write_is_refused_before_the_run(
    name: str, tmp_path: Path
) -> None:
    require("matplotlib")
    out = tmp_path / "r.json"
    done = cli(
        "eval", "--agent", "noop", "--task-ids", "0", "--out", out, "--plot", tmp_path / name
    )
    line = one_line_error(done)
    assert line.startswith(f"airline-gym eval: error: --plot {tmp_path / name}")
    assert ".jsn" in line or "no such folder" in line
    assert not out.exists() and not list(tmp_path.glob("r.json*"))
