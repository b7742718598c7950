"""A first-time user's view of the CLI: messages name the command's own flags, bare
``airline-gym`` shows what it can do, both spellings of --no-colour, the README's command table
and its TRL example's fill-ins."""

from __future__ import annotations

import ast
import builtins
import os
import re
import sys
from pathlib import Path

import pytest
from cli_runner import cli, one_line_error

from airline_gym.cli.main import COMMANDS
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import EvalConfig, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integrations"))
from readme_examples import docs_text, page_text, readme_example

NO_KEYS = {name: "" for name in os.environ if name.endswith("_API_KEY")}


@pytest.mark.parametrize(
    ("args", "server_flag", "offline"),
    [
        (["eval", "--agent", "gold", "--task-ids", "0"], "--user-api-base", "--user scripted"),
        (["play", "--task", "0"], "--user-api-base", "--user scripted"),
        (["demo"], "--user-api-base", "--user scripted"),
    ],
)
def test_a_customer_without_credentials_is_told_the_commands_own_flags(
    args: list[str], server_flag: str, offline: str, tmp_path: Path
) -> None:
    done = cli(*args, "--user-model", "gpt-4.1", env=NO_KEYS, cwd=tmp_path)
    line = one_line_error(done, code=2)  # a missing credential is bad input
    assert "the LLM user simulator cannot run" in line
    assert f"or pass {server_flag} URL for a local OpenAI-compatible server" in line
    assert line.endswith(f"or run offline with {offline}"), line
    assert "api_base=" not in line and 'user="scripted"' not in line


def test_evaluate_words_its_hints_for_python(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    evaluate("noop", EvalConfig(task_ids=["0"]), out=out)
    with pytest.raises(ConfigError) as raised:
        evaluate("noop", EvalConfig(task_ids=["0"]), out=out)
    assert "pass resume=True" in str(raised.value) and "--" not in str(raised.value)
    line = one_line_error(cli("eval", "--agent", "noop", "--task-ids", "0", "--out", out))
    assert "pass --resume to continue it, or choose another --out" in line


def test_bare_airline_gym_prints_its_usage_and_commands() -> None:
    done = cli()
    assert done.returncode == 2 and done.stdout.startswith("usage: airline-gym")
    assert all(name in done.stdout for name in COMMANDS)


def test_demo_takes_both_spellings_of_no_colour() -> None:
    british, american = cli("demo", "--no-colour"), cli("demo", "--no-color")
    assert british.returncode == american.returncode == 0, american.stderr
    assert british.stdout == american.stdout and "\x1b[" not in american.stdout
    assert american.stdout.rstrip().endswith("reward=1.0")


def test_the_cli_page_lists_every_command() -> None:
    table = re.findall(r"^\| `airline-gym ([\w-]+)", page_text("cli.md"), flags=re.MULTILINE)
    assert sorted(set(table)) == sorted(COMMANDS)


def test_the_trl_example_names_what_the_reader_fills_in() -> None:
    code = readme_example("trl")
    tree = ast.parse(code)
    bound = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free = used - bound - set(dir(builtins))
    first = code.splitlines()[0]
    assert free == {"model", "tokenizer", "TASKS", "args"}
    assert first.startswith("# Yours to fill in:") and all(name in first for name in free)


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n#", start + 4)
    return text[start : end if end > 0 else len(text)]


def test_the_docs_say_where_every_outside_file_comes_from() -> None:
    text = docs_text()
    origins = _section(page_text("data.md"), "Files not in this repository")
    named = set(
        re.findall(r"`(\.\./shared/[\w./*-]+|t[23]\w*__[\w.-]+\.json|tau3-[\w-]+\.json)", text)
    )
    assert named, "the docs name no outside file"
    for name in named:
        if name.startswith("../shared/"):
            assert f"../shared/{name.split('/')[2]}" in origins, name
        elif name.startswith(("t2old__", "t3new__")) and "task_id_fix" not in name:
            assert f"`{name[:7]}...`" in origins, name  # one of the recorded runs
        else:
            assert name in origins, name
    for module in ("tasks", "show", "eval", "audit"):
        doc = __import__(f"airline_gym.cli.{module}", fromlist=["x"]).__doc__
        assert "tau3-airline-tasks.json" not in doc and "../shared" not in doc, module
        assert "--tasks tau3" not in doc, module
