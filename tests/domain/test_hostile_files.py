"""Hostile tasks files and data folders: refused when they load, one line naming the file, the
task and the field (``ConfigError`` in Python, exit 2 from the CLI), never a traceback and never
a run of silent zeros."""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli, one_line_error

from airline_gym.data import data_files
from airline_gym.domain.tasks import load_task_set
from airline_gym.env import AirlineEnv
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import EvalConfig, evaluate

Mutation = Callable[[dict[str, Any]], None]


def _criteria(key: str, value: Any) -> Mutation:
    return lambda task: task["evaluation_criteria"].__setitem__(key, value)


def _scenario(key: str, value: Any) -> Mutation:
    return lambda task: task["user_scenario"]["instructions"].__setitem__(key, value)


#: (how the third task is broken, what the one-line error names)
BROKEN_TASKS: dict[str, tuple[Mutation, str]] = {
    "no user_scenario": (lambda t: t.pop("user_scenario"), "missing field 'user_scenario'"),
    "user_scenario a list": (lambda t: t.__setitem__("user_scenario", []), "'user_scenario'"),
    "no task_instructions": (
        lambda t: t["user_scenario"]["instructions"].pop("task_instructions"),
        "'user_scenario.instructions.task_instructions' must be a string",
    ),
    "known_info a number": (_scenario("known_info", 7), "'user_scenario.instructions.known_info'"),
    "reward_basis FOO": (_criteria("reward_basis", ["FOO"]), "unknown basis 'FOO'"),
    "reward_basis 5": (_criteria("reward_basis", 5), "'evaluation_criteria.reward_basis' must"),
    "reward_basis DB": (_criteria("reward_basis", "DB"), "not string 'DB'"),
    "reward_basis [1]": (_criteria("reward_basis", [1]), "unknown basis 1"),
    "initial_state action env_type bot": (
        lambda t: t.__setitem__(
            "initial_state",
            {"initialization_actions": [{"env_type": "bot", "func_name": "x", "arguments": {}}]},
        ),
        "'initial_state.initialization_actions[0].env_type' must be user or assistant",
    ),
    "reward_basis []": (
        _criteria("reward_basis", []),
        "'evaluation_criteria.reward_basis' is empty",
    ),
    "arguments nested 900 deep": (
        lambda t: t["evaluation_criteria"]["actions"][0]["arguments"].__setitem__(
            "user_id", functools.reduce(lambda inner, _: [inner], range(900), "x")
        ),
        "nested too deeply",
    ),
}


def _tasks_file(folder: Path, tau2_tasks: Any, mutate: Mutation | None = None) -> Path:
    records = [tau2_tasks[i].raw for i in ("0", "1", "2")]
    if mutate is not None:
        mutate(records[2])
    path = folder / "tasks.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


@pytest.mark.parametrize("case", BROKEN_TASKS)
def test_a_broken_task_is_refused_when_the_task_set_loads(
    case: str, tmp_path: Path, tau2_tasks: Any
) -> None:
    mutate, names = BROKEN_TASKS[case]
    path = _tasks_file(tmp_path, tau2_tasks, mutate)
    for load in (lambda: load_task_set(path), lambda: AirlineEnv(tasks=path, user="scripted")):
        with pytest.raises(ConfigError) as raised:
            load()
        message = str(raised.value)
        assert str(path.resolve()) in message and "task #3 (id '2')" in message, message
        assert names in message and "\n" not in message, message


def test_nl_assertion_without_a_judge_is_refused_before_anything_runs(
    tmp_path: Path, tau2_tasks: Any
) -> None:
    path = _tasks_file(tmp_path, tau2_tasks, _criteria("reward_basis", ["DB", "NL_ASSERTION"]))
    assert load_task_set(path)["2"].reward_basis == ("DB", "NL_ASSERTION")  # a valid shape
    with pytest.raises(ConfigError, match=r"task '2'.*NL_ASSERTION, which needs a judge model"):
        AirlineEnv(tasks=path, user="scripted")
    out = tmp_path / "run.json"
    with pytest.raises(ConfigError, match="needs a judge model"):
        evaluate("gold", EvalConfig(tasks=path), out=out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks.json"]  # no results, journal
    line = one_line_error(cli("eval", "--agent", "gold", "--tasks", path, "--out", out))
    assert f"tasks file {path}" in line and "task '2'" in line and "NL_ASSERTION" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "case"),
    [
        ("eval", "no user_scenario"),
        ("show", "reward_basis FOO"),
        ("demo", "reward_basis 5"),
        ("audit", "reward_basis []"),
    ],
)
def test_cli_refuses_a_broken_tasks_file_in_one_line(
    command: str, case: str, tmp_path: Path, tau2_tasks: Any
) -> None:
    mutate, names = BROKEN_TASKS[case]
    path = _tasks_file(tmp_path, tau2_tasks, mutate)
    args = {
        "eval": ["--agent", "gold", "--out", str(tmp_path / "r.json")],
        "show": ["0"],
        "demo": ["--task", "0"],
        "audit": [],
    }[command]
    line = one_line_error(cli(command, *args, "--tasks", path))
    assert line.startswith(f"airline-gym {command}: error: tasks file ") and names in line
    assert not (tmp_path / "r.json").exists()


def _break_db(text: str) -> str:
    data = json.loads(text)
    del data["users"][next(iter(data["users"]))]["email"]
    return json.dumps(data)


#: (file, how it is broken, what the one-line error says)
BROKEN_DATA: dict[str, tuple[str, Callable[[str], str | bytes], str]] = {
    "db truncated": ("db.json", lambda text: text[:100_000], "not valid JSON"),
    "db empty": ("db.json", lambda text: "", "not valid JSON"),
    "db a list": ("db.json", lambda text: "[1, 2]", "expected an object with flights"),
    "db record": ("db.json", _break_db, "KeyError: 'email'"),
    "policy not UTF-8": ("policy.md", lambda text: b"\xff\xfe" + text.encode(), "not UTF-8"),
}


@pytest.fixture(scope="module")
def good_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    files = data_files()
    for name in ("db", "tasks", "split_tasks", "policy", "user_guidelines", "agent_instruction"):
        source = getattr(files, name)
        shutil.copy(source, folder / source.name)
    return folder


@pytest.mark.parametrize("case", BROKEN_DATA)
def test_a_broken_data_file_is_one_line_naming_it(
    case: str, good_data: Path, tmp_path: Path
) -> None:
    name, breaks, says = BROKEN_DATA[case]
    folder = tmp_path / "data"
    shutil.copytree(good_data, folder)
    broken = breaks((folder / name).read_text(encoding="utf-8"))
    if isinstance(broken, bytes):
        (folder / name).write_bytes(broken)
    else:
        (folder / name).write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        AirlineEnv(user="scripted", data_dir=folder)
    assert str(folder / name) in str(raised.value) and says in str(raised.value)
    line = one_line_error(cli("demo", env={"AIRLINE_GYM_DATA_DIR": str(folder)}))
    assert str(folder / name) in line and says in line, line


@pytest.mark.parametrize(("first", "second"), [("g0_0", "g0_0"), (5, "5")])
def test_two_tasks_with_one_id_are_refused_when_the_set_loads(
    first: Any, second: Any, tmp_path: Path, tau2_tasks: Any
) -> None:
    """Keyed by id, the later would silently replace the earlier: fewer tasks played than the
    file holds, and ``eval`` exiting 0 all the same."""
    records = [dict(tau2_tasks[i].raw) for i in ("0", "1", "2", "3")]
    records[1]["id"], records[3]["id"] = first, second
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_task_set(path)
    message = str(raised.value)
    assert f"task #4 has the id {str(second)!r} of task #2" in message, message
    out = tmp_path / "r.json"
    line = one_line_error(cli("eval", "--agent", "gold", "--tasks", path, "--out", out))
    assert "task #4 has the id" in line and "give each task its own id" in line, line
    assert not out.exists()
