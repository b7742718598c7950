"""``eval --agent package.module:factory``: your own agent from the command line.

The factory is any callable (a class, a function) named as ``module:attribute`` (the module is
imported as Python would from ``sys.path``: the current folder, ``$PYTHONPATH``, installed
packages; the attribute may be dotted, ``module:Class.create``). It is called once per
episode with the keyword arguments it accepts, of:

- ``seed``: the episode's seed (an int derived from --seed, as in the results file);
- ``task_set``: the run's :class:`~airline_gym.domain.tasks.TaskSet`;

and returns an agent: an object with ``reset(info)`` and ``act(observation, info)`` (and, if it
wants, ``async aact(observation, info)``), as :class:`airline_gym.agents.base.Agent` says.
Anything wrong with the spec, or a factory that fails or returns something else, is one line
(exit 2) before any episode runs (the factory is tried once with the run's base seed); a factory
that fails later stops the run in one line (exit 1), the episodes played so far kept for
--resume.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from airline_gym.agents.registry import BUILTIN_AGENTS
from airline_gym.domain.tasks import TaskSet
from airline_gym.errors import AgentError, AirlineGymError, ConfigError, describe_exception

__all__ = ["custom_agent_factory", "is_custom_agent", "load_factory"]

#: The keyword arguments a factory may accept.
FACTORY_ARGUMENTS = ("seed", "task_set")


def is_custom_agent(name: str) -> bool:
    """Whether ``--agent NAME`` names a factory (``module:attribute``), not a built-in agent;
    a ConfigError for a name that is neither."""
    if name in BUILTIN_AGENTS:
        return False
    if ":" not in name:
        raise ConfigError(
            f"--agent: invalid choice: {name!r} (choose from {', '.join(BUILTIN_AGENTS)}, or "
            "name your own agent's factory as package.module:factory)"
        )
    return True


def load_factory(spec: str) -> Callable[..., Any]:
    """The callable ``module:attribute`` names, or a one-line ConfigError saying what is wrong."""
    module_name, _, attribute = spec.partition(":")
    if not module_name.strip() or not attribute.strip():
        raise ConfigError(f"--agent {spec!r}: give package.module:factory (both parts)")
    name = module_name.strip()
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
            raise ConfigError(  # the module is there, but something it imports is not
                f"--agent {spec!r}: importing {module_name!r} failed: {describe_exception(exc)}"
            ) from None
        raise ConfigError(
            f"--agent {spec!r}: cannot import {module_name!r} ({exc}; is its folder on PYTHONPATH?)"
        ) from None
    except Exception as exc:  # the module itself fails on import: the user's code, one line
        raise ConfigError(
            f"--agent {spec!r}: importing {module_name!r} failed: {describe_exception(exc)}"
        ) from None
    found: Any = module
    for part in attribute.strip().split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise ConfigError(
                f"--agent {spec!r}: module {module_name!r} has no attribute {attribute!r}"
            ) from None
    if not callable(found):
        raise ConfigError(
            f"--agent {spec!r}: {attribute!r} is a {type(found).__name__}, not a callable factory"
        )
    return found  # type: ignore[no-any-return]


def _accepted(factory: Callable[..., Any]) -> tuple[str, ...]:
    """Which of :data:`FACTORY_ARGUMENTS` ``factory`` takes (all, with ``**kwargs``)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (some builtins): call it bare
        return ()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return FACTORY_ARGUMENTS
    names = {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return tuple(name for name in FACTORY_ARGUMENTS if name in names)


def custom_agent_factory(spec: str, task_set: TaskSet, seed: int) -> Callable[[int], Any]:
    """A factory ``seed -> agent`` for ``evaluate``, from ``--agent module:factory``; the
    factory is tried once with ``seed`` so that a bad one fails here, in one line."""
    factory = load_factory(spec)
    accepted = _accepted(factory)

    def build(episode_seed: int, error: type[AirlineGymError]) -> Any:
        given = {"seed": episode_seed, "task_set": task_set}
        try:
            agent = factory(**{name: given[name] for name in accepted})
        except Exception as exc:
            raise error(
                f"--agent {spec!r}: the factory failed: {describe_exception(exc)}"
            ) from None
        missing = [m for m in ("reset", "act") if not callable(getattr(agent, m, None))]
        if missing:
            raise error(
                f"--agent {spec!r}: the factory returned a {type(agent).__name__}, not an agent "
                f"(it has no {' or '.join(m + '()' for m in missing)})"
            )
        return agent

    build(seed, ConfigError)  # up front: bad input, exit 2

    def make(episode_seed: int) -> Any:  # during the run: a failed run, exit 1
        return build(episode_seed, AgentError)

    return make
