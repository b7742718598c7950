"""The README's own examples, run as written.

The Gymnasium loop calls ``litellm.completion(model="gpt-4.1", ...)`` and makes an LLM customer
on ``gpt-4.1``: here both reach a scripted OpenAI-compatible server on 127.0.0.1 through the
variables litellm reads for OpenAI's endpoint. The agent's side replays task 17's gold actions,
then calls ``done``; the example must print the reward 1.0 that the env grades.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from airline_gym.domain.tasks import load_task_set
from airline_gym.testing.openai_server import OpenAIServer, Reply

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_its_python_examples() -> None:
    blocks = python_blocks()
    assert len(blocks) == 3
    for block in blocks:
        compile(block, "README.md", "exec")


def test_the_gymnasium_loop_plays_and_prints_the_grade(monkeypatch: pytest.MonkeyPatch) -> None:
    gold = [(a.name, a.arguments) for a in load_task_set("tau2")["17"].actions]
    agent_turns = iter([*gold, ("done", {})])

    def reply(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):  # the customer: no tools
            return Reply("Hi, I'd like to change my reservation. My user id is raj_sanchez_7340.")
        name, arguments = next(agent_turns)
        return Reply(tool_calls=[{"name": name, "arguments": arguments}])

    loop = next(block for block in python_blocks() if "litellm.completion" in block)
    with OpenAIServer(reply) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.base_url)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(loop, "README.md", "exec"), {})  # the README's loop, as written
        models = {r["model"] for r in server.requests}
    assert next(agent_turns, None) is None  # every gold call and done were asked for
    assert models == {"gpt-4.1"}
    assert out.getvalue().startswith("1.0 ")


def bash_commands() -> list[list[str]]:
    """Each ``airline-gym ...`` command of the README's bash blocks, continuation lines joined."""
    import shlex

    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    text = "\n".join(blocks).replace("\\\n", " ")
    return [
        shlex.split(line.split("#")[0])
        for line in text.splitlines()
        if line.strip().startswith("airline-gym ")
    ]


def test_the_readme_commands_parse_as_written() -> None:
    from airline_gym.cli.main import build_parser

    commands = bash_commands()
    assert [c[1] for c in commands] == ["eval", "report"]
    for command in commands:
        args = build_parser().parse_args(command[1:])
        assert args.command == command[1]
    evaluated = build_parser().parse_args(commands[0][1:])
    assert evaluated.benchmark == "tau3" and evaluated.trials == 4
    assert evaluated.agent_api_base == "http://localhost:8000/v1"  # the agent's server


def test_the_trainer_hook_takes_a_generated_file(tmp_path: Path, monkeypatch, tau3) -> None:
    """The README's TRL block, its two calls of ours as written, on the file the README's
    ``generate`` command writes: the rows and the env play the generated tasks."""
    import ast

    pytest.importorskip("trl")
    from airline_gym.integrations.trl import dataset_rows, make_environment_factory
    from airline_gym.taskgen.generate import generate
    from airline_gym.taskgen.output import write_tasks

    block = next(block for block in python_blocks() if "GRPOTrainer" in block)
    calls = {
        node.func.id: ast.unparse(node)
        for node in ast.walk(ast.parse(block))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    readme = README.read_text(encoding="utf-8")
    command = re.search(r"`airline-gym generate --n \d+ --seed (\d+) --out\s+(\S+)`", readme)
    assert command is not None and command.group(2) == "train-tasks.json"
    monkeypatch.chdir(tmp_path)
    write_tasks(generate(20, seed=int(command.group(1))).records, "train-tasks.json")
    names = {"dataset_rows": dataset_rows, "make_environment_factory": make_environment_factory}
    rows = eval(calls["dataset_rows"], names)  # as the README writes them
    factory = eval(calls["make_environment_factory"], names)
    generated = {t["id"] for t in json.loads(Path("train-tasks.json").read_text())}
    assert len(rows) == 20 and {row["task_id"] for row in rows} == generated
    env = factory()
    env.reset(**rows[0])
    assert env.task_id == rows[0]["task_id"] and env.env.episode.task.raw.get("airline_gym")
