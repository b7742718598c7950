"""Customers for the agent to serve: LLM (reference), scripted, replayed or human.

``make_user("llm" | "scripted" | "replay" | "human", **kwargs)`` builds one by name; a
:class:`UserSimulator` instance is returned as is.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from airline_gym.errors import ConfigError
from airline_gym.users.base import Dialogue, UserSimulator, UserSimulatorError
from airline_gym.users.human import HumanUser
from airline_gym.users.llm_user import DEFAULT_USER_MODEL, USER_MODEL_ENV, LLMUser
from airline_gym.users.replay import ReplayUser
from airline_gym.users.scripted import ScriptedUser

__all__ = [
    "DEFAULT_USER_MODEL",
    "USER_KINDS",
    "USER_MODEL_ENV",
    "Dialogue",
    "HumanUser",
    "LLMUser",
    "ReplayUser",
    "ScriptedUser",
    "UserSimulator",
    "UserSimulatorError",
    "make_user",
]

#: The user simulators :func:`make_user` builds by name.
USER_KINDS: dict[str, type[UserSimulator]] = {
    "llm": LLMUser,
    "scripted": ScriptedUser,
    "replay": ReplayUser,
    "human": HumanUser,
}

#: Passed by callers to every kind (e.g. the env); ignored by kinds that do not take them.
_SHARED = frozenset({"data_dir", "benchmark"})


@functools.cache
def _parameters(cls: type) -> frozenset[str]:
    return frozenset(inspect.signature(cls).parameters)


def make_user(spec: str | UserSimulator, **kwargs: Any) -> UserSimulator:
    """Build the user simulator ``spec`` names with ``kwargs``, or return an instance as is.

    ``None``-valued kwargs are dropped, so a caller may always pass e.g. ``model=None``;
    ``data_dir`` and ``benchmark`` are ignored by kinds without them. Any other kwarg the kind
    does not take is a ``TypeError``.
    """
    given = {k: v for k, v in kwargs.items() if v is not None}
    if isinstance(spec, UserSimulator):
        unused = sorted(set(given) - _SHARED)
        if unused:
            raise TypeError(f"make_user got a {type(spec).__name__} instance and also {unused}")
        return spec
    if not isinstance(spec, str) or spec.lower() not in USER_KINDS:
        raise ConfigError(
            f"unknown user simulator {spec!r}: expected one of {', '.join(USER_KINDS)} "
            "or a UserSimulator instance"
        )
    cls = USER_KINDS[spec.lower()]
    accepted = _parameters(cls)
    unknown = sorted(set(given) - accepted - _SHARED)
    if unknown:
        raise TypeError(f'user="{spec}" does not take {unknown} (it takes {sorted(accepted)})')
    return cls(**{k: v for k, v in given.items() if k in accepted})
