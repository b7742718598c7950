"""The built-in agents, by the names the command line and ``evaluate()`` accept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airline_gym.agents.dialogue_gold import DialogueGoldAgent
from airline_gym.agents.policy import PolicyAgent
from airline_gym.agents.scripted import GoldAgent, NoOpAgent, RandomAgent, TransferAgent
from airline_gym.domain.tasks import TaskSet
from airline_gym.errors import ConfigError

#: name -> (one-line description, factory ``(task_set, seed) -> agent``).
_REGISTRY: dict[str, tuple[str, Callable[[TaskSet, int | None], Any]]] = {
    "gold": ("replays the task's gold actions, then says the facts", lambda t, s: GoldAgent(t)),
    "gold-dialogue": (
        "the gold actions in a policy-following dialogue (confirms, refusals, answers)",
        lambda t, s: DialogueGoldAgent(t),
    ),
    "policy": (
        "follows the policy from what it observes, never the gold (the offline customer's words)",
        lambda t, s: PolicyAgent(),
    ),
    "noop": ("does nothing and stops at once", lambda t, s: NoOpAgent()),
    "transfer": ("transfers to a human agent at once", lambda t, s: TransferAgent()),
    "random": ("seeded random well-formed actions", lambda t, s: RandomAgent(seed=s)),
}

#: The names of the built-in agents.
BUILTIN_AGENTS: tuple[str, ...] = tuple(_REGISTRY)


def describe_builtin(name: str) -> str:
    """One line saying what the built-in agent ``name`` does."""
    return _REGISTRY[_known(name)][0]


def builtin_agent(name: str, task_set: TaskSet, seed: int | None = None) -> Any:
    """A new built-in agent ``name`` (one of :data:`BUILTIN_AGENTS`)."""
    return _REGISTRY[_known(name)][1](task_set, seed)


def _known(name: str) -> str:
    if name not in _REGISTRY:
        raise ConfigError(f"unknown agent {name!r} (choose from {', '.join(BUILTIN_AGENTS)})")
    return name
