"""One error hierarchy: old import paths, builtin bases kept, the CLI's one-line policy."""

from __future__ import annotations

import argparse

import pytest

import airline_gym.cli.tasks
from airline_gym import errors
from airline_gym.cli.main import main


def test_old_import_paths_name_the_same_classes() -> None:
    from airline_gym.agents import AgentError
    from airline_gym.data import DataError
    from airline_gym.env.actions import ActionError
    from airline_gym.llm import LLMError
    from airline_gym.users import UserSimulatorError

    assert (AgentError, DataError, ActionError, LLMError, UserSimulatorError) == (
        errors.AgentError,
        errors.DataError,
        errors.ActionError,
        errors.LLMError,
        errors.UserSimulatorError,
    )


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (errors.DataError, RuntimeError),
        (errors.LLMError, RuntimeError),
        (errors.AgentError, RuntimeError),
        (errors.UserSimulatorError, RuntimeError),
        (errors.ActionError, ValueError),
        (errors.ConfigError, ValueError),
        (errors.UnknownIdError, KeyError),
        (errors.MissingFileError, FileNotFoundError),
        (errors.MissingDependencyError, ImportError),
    ],
)
def test_every_error_is_an_airline_gym_error_and_its_old_builtin(
    cls: type[Exception], builtin: type[Exception]
) -> None:
    assert issubclass(cls, errors.AirlineGymError) and issubclass(cls, builtin)


def test_domain_errors_are_action_errors() -> None:
    from airline_gym.domain.calculator import CalculationError
    from airline_gym.domain.tools import ToolError
    from airline_gym.domain.validation import ArgumentError

    assert all(
        issubclass(c, errors.ActionError) for c in (CalculationError, ToolError, ArgumentError)
    )


def test_a_missing_library_names_its_extra() -> None:
    with pytest.raises(errors.MissingDependencyError) as info:
        errors.require("surely_not_installed_xyz.sub", "plot", "--plot")
    assert (
        str(info.value) == "--plot needs surely_not_installed_xyz: pip install 'airline-gym[plot]'"
    )
    assert info.value.extra == "plot" and isinstance(info.value, ImportError)
    assert errors.require("json", "test", "x").dumps([]) == "[]"


def test_unknown_id_reads_as_its_message_not_a_key_repr() -> None:
    assert str(errors.UnknownIdError("no task '99'")) == "no task '99'"


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (errors.ConfigError("--x must be at least 1"), 2),
        (errors.MissingFileError("no such file: a.json"), 2),
        (errors.LLMError("HTTP 500 from x"), 1),
        (errors.DataError("cannot fetch"), 1),
    ],
)
def test_the_cli_reports_airline_gym_errors_in_one_line(
    raised: Exception,
    code: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def run(args: argparse.Namespace) -> int:
        raise raised

    monkeypatch.setattr(airline_gym.cli.tasks, "run", run)
    assert main(["tasks"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"airline-gym tasks: error: {raised}"]


@pytest.mark.parametrize("bug", [KeyError("x"), ValueError("y"), OSError("z"), TypeError("t")])
def test_anything_else_is_a_bug_and_propagates(
    bug: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(args: argparse.Namespace) -> int:
        raise bug

    monkeypatch.setattr(airline_gym.cli.tasks, "run", run)
    with pytest.raises(type(bug)):
        main(["tasks"])
