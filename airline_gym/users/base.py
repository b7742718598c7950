"""The interface every simulated (or human) customer implements."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any

from airline_gym.domain.tasks import Task
from airline_gym.errors import UserSimulatorError

__all__ = ["Dialogue", "UserSimulator", "UserSimulatorError"]

Dialogue = list[dict[str, Any]]
"""What the customer has seen: ``{"role": "assistant" | "user", "content": str}`` messages, from
the agent's greeting on. Agent messages with tool calls and tool results are never shown."""


class UserSimulator(ABC):
    """A customer: told the task at ``reset``, then asked for one reply per agent message."""

    #: Whether the simulator needs no network or API key (scripted, replay).
    offline: bool = False
    #: Whether ``reply`` may wait (network, a person); if not, ``areply`` calls it inline.
    blocking: bool = True

    @abstractmethod
    def reset(self, task: Task, seed: int | None = None) -> None:
        """Start a new conversation about ``task``."""

    @abstractmethod
    def reply(self, dialogue: Dialogue) -> str:
        """The customer's next message; may contain ###STOP###, ###TRANSFER###, ###OUT-OF-SCOPE###.

        Raises :class:`UserSimulatorError` when no reply can be produced.
        """

    async def areply(self, dialogue: Dialogue) -> str:
        """Async :meth:`reply`: inline for non-blocking simulators, else in a worker thread."""
        if not self.blocking:
            return self.reply(dialogue)
        return await asyncio.to_thread(self.reply, dialogue)

    def attach_db(self, db: Any) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Hand over the episode's live DB (an ``AirlineDB``), after :meth:`reset`.

        A customer that reads its own account (the offline intent customer checks that a change
        the agent says it made is there, and judges flights on today's seats and prices) keeps
        it and only reads it; the others ignore it.
        """

    def check_ready(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Raise :class:`UserSimulatorError` at once if replies cannot work (e.g. no API key)."""
