"""The command line loads only what the command it runs needs.

``airline-gym --help`` lists every command without importing any command's module; a command
(or its ``--help``) imports its own module and nothing heavy it does not use. Checked on
``sys.modules`` in a fresh interpreter.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

from airline_gym.cli.main import COMMANDS, screen_text

PROBE = """
import contextlib, io, json, sys
from airline_gym.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "help": out.getvalue(), "modules": sorted(sys.modules)}))
"""
HEAVY = ("litellm", "aiohttp", "openai", "httpx", "rich", "matplotlib", "filelock")


def probe(*argv: str) -> dict[str, object]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def command_modules(modules: object) -> set[str]:
    assert isinstance(modules, list)
    return {m for m, _ in COMMANDS.values()} & set(modules)


def test_top_level_help_lists_every_command_and_imports_none_of_them() -> None:
    seen = probe("--help")
    assert seen["code"] == 0
    text = str(seen["help"])
    for name, (_, summary) in COMMANDS.items():
        assert name in text and summary.split()[0] in text
    assert command_modules(seen["modules"]) == set()
    assert not [m for m in seen["modules"] if m.split(".")[0] in HEAVY]  # type: ignore[union-attr]
    assert not [m for m in seen["modules"] if m.startswith("airline_gym.harness")]  # type: ignore[union-attr]


def test_a_command_imports_its_own_module_only_and_eval_help_no_llm_library() -> None:
    seen = probe("eval", "--help")
    assert seen["code"] == 0 and "--agent-model" in str(seen["help"])
    assert command_modules(seen["modules"]) == {"airline_gym.cli.eval"}
    assert not [m for m in seen["modules"] if m.split(".")[0] in ("litellm", "aiohttp")]  # type: ignore[union-attr]


def test_a_bad_argument_is_still_one_line_and_exit_2() -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", "eval", "--agent", "gold", "--trials", "x"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "airline-gym eval: error: argument --trials/--num-trials: invalid int value: 'x'"
    ]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_summary_is_the_first_line_of_its_module_docstring(name: str) -> None:
    module_name, summary = COMMANDS[name]
    doc = screen_text((importlib.import_module(module_name).__doc__ or "").strip())
    assert doc.splitlines()[0] == summary
