"""One exception hierarchy for the whole package.

Everything airline-gym raises on purpose is an :class:`AirlineGymError`; the CLI reports those
as one line (exit code :attr:`AirlineGymError.exit_code`) and lets anything else, a bug, show
its traceback. Each class also derives from the builtin exception it replaced (``ValueError``,
``RuntimeError``, ``ImportError``), so existing ``except`` clauses keep working.

::

    AirlineGymError
    ├── DataError               domain data missing, unfetchable or corrupt
    ├── SaveError               a results file or journal could not be written
    ├── LLMError                an LLM call failed for good
    ├── AgentError              the agent could not produce an action
    ├── UserSimulatorError      the customer could not reply
    ├── ActionError             an agent action the env refuses (shown to the agent)
    └── ConfigError             bad arguments, options or input files given by the user
        ├── UnknownIdError          no such task/simulation id (also a ``KeyError``)
        ├── MissingFileError        no such input file (also a ``FileNotFoundError``)
        └── MissingDependencyError  an optional library is not installed (also an ``ImportError``)
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = [
    "ActionError",
    "AgentError",
    "AirlineGymError",
    "ConfigError",
    "DataError",
    "LLMError",
    "MissingDependencyError",
    "MissingFileError",
    "SaveError",
    "UnknownIdError",
    "UserSimulatorError",
    "describe_exception",
    "require",
]


class AirlineGymError(Exception):
    """Base of every error airline-gym raises on purpose; ``str(error)`` is one line for users."""

    #: The CLI's exit status for this kind of error (2: the user's input, 1: anything else).
    exit_code: int = 1


class DataError(AirlineGymError, RuntimeError):
    """The domain data could not be found, fetched or verified; the message says how to fix it."""


class SaveError(AirlineGymError, OSError):
    """A results file or journal could not be written (disk full, read-only, ...); the message
    names the file and says what is kept."""


class LLMError(AirlineGymError, RuntimeError):
    """An LLM call failed for good (retries exhausted, or a non-retryable error).

    ``cause`` is a one-line human-readable reason, ``attempts`` the number of requests made,
    ``status_code`` the last HTTP status if any, ``retryable`` whether the last failure was
    transient. The underlying exception, if any, is chained as ``__cause__``.
    """

    def __init__(
        self,
        cause: str,
        *,
        attempts: int = 0,
        status_code: int | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(cause)
        self.cause = cause
        self.attempts = attempts
        self.status_code = status_code
        self.retryable = retryable


class AgentError(AirlineGymError, RuntimeError):
    """The agent could not produce an action (e.g. its LLM failed after retries).

    ``cause`` is a one-line reason. The evaluation harness ends the episode with termination
    reason ``agent_error`` (reward 0) and records the cause.
    """

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class UserSimulatorError(AirlineGymError, RuntimeError):
    """The simulator could not produce a reply (e.g. the LLM failed after retries)."""


class ActionError(AirlineGymError, ValueError):
    """An agent action the env refuses; ``str(error)`` is what the agent is shown."""


class ConfigError(AirlineGymError, ValueError):
    """A bad argument, option or input file given by the user; the message says which."""

    exit_code = 2


class UnknownIdError(ConfigError, KeyError):
    """An id or name the user gave (a task, a simulation) that does not exist."""

    def __str__(self) -> str:  # the message as is, not KeyError's repr of it
        return str(self.args[0]) if self.args else ""


class MissingFileError(ConfigError, FileNotFoundError):
    """A file the user named does not exist."""


class MissingDependencyError(ConfigError, ImportError):
    """An optional library is missing; the message names the extra that installs it."""

    def __init__(self, feature: str, module: str, extra: str) -> None:
        super().__init__(f"{feature} needs {module}: pip install 'airline-gym[{extra}]'")
        self.name = module
        self.extra = extra


def describe_exception(exc: BaseException, limit: int = 500) -> str:
    """``Type: text`` of ``exc`` on one line (the text cut at ``limit`` characters), or the type.

    >>> describe_exception(RecursionError("maximum recursion   depth exceeded"))
    'RecursionError: maximum recursion depth exceeded'
    >>> describe_exception(KeyError())
    'KeyError'
    """
    text = " ".join(str(exc).split())
    if len(text) > limit:
        text = text[:limit] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``extra``.

    >>> require("json", "test", "this example").__name__
    'json'
    >>> require("nope", "plot", "--plot")
    Traceback (most recent call last):
    ...
    airline_gym.errors.MissingDependencyError: --plot needs nope: pip install 'airline-gym[plot]'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(feature, module.split(".")[0], extra) from None
