"""The README's own examples, run as written.

The Gymnasium loop calls ``litellm.completion(model="gpt-4.1", ...)`` and makes an LLM customer
on ``gpt-4.1``: here both reach a scripted OpenAI-compatible server on 127.0.0.1 through the
variables litellm reads for OpenAI's endpoint. The agent's side replays task 17's gold actions,
then calls ``done``; the example must print the reward 1.0 that the env grades.
"""

from __future__ import annotations

import contextlib
import io
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
