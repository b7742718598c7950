"""Agents without a model: fixed scripts, the task's gold actions, baselines, random actions."""

from __future__ import annotations

import os
from collections import deque
from typing import Any

import numpy as np

from airline_gym.agents.base import DONE, Action, offers_tool, text_message, tool_call_message
from airline_gym.domain.tasks import DEFAULT_TASK_SET, TaskSet, load_task_set
from airline_gym.domain.tool_reply import RESPOND_TOOL
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.env.actions import DONE_TOOL
from airline_gym.env.spaces import AssistantMessageSpace

#: What a scripted agent says when its script is over and it cannot call ``done``
#: (``leaderboard`` protocol): the conversation then runs on to the customer's stop or a limit.
CLOSING = text_message("Is there anything else I can help you with?")
#: What :class:`LookupAgent` says after its lookups.
REFUSAL = "I'm sorry, but our policy does not allow me to make that change."


class ScriptedAgent:
    """Plays a fixed list of actions, then ``done`` (or, when ``done`` is not offered, a
    closing question, repeated until the customer stops or a limit ends the episode). Where
    the customer is reached through ``respond_to_user`` (the ``tool-reply`` protocol), its
    text goes to the customer as that tool's calls."""

    def __init__(self, actions: list[Any]) -> None:
        self.actions = list(actions)
        self._queue: deque[Any] = deque()
        self._end: Action = DONE
        self._through_tool = False
        self._said = 0

    def reset(self, info: dict[str, Any]) -> None:
        """Restart the script."""
        self._queue = deque(self.actions)
        self._end = DONE if offers_tool(info, DONE_TOOL, True) else CLOSING
        self._through_tool = offers_tool(info, RESPOND_TOOL, False)
        self._said = 0

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """The next scripted action, or the ending when the script is over."""
        action = self._queue.popleft() if self._queue else self._end
        if self._through_tool and isinstance(action, dict) and not action.get("tool_calls"):
            self._said += 1
            return tool_call_message(
                RESPOND_TOOL, {"message": action["content"]}, f"say_{self._said}"
            )
        return action


class GoldAgent(ScriptedAgent):
    """Replays the task's gold actions, says the communicate strings, then calls ``done``."""

    def __init__(
        self, tasks: TaskSet | str | os.PathLike[str] = DEFAULT_TASK_SET, data_dir: Any = None
    ) -> None:
        super().__init__([])
        self.tasks = tasks if isinstance(tasks, TaskSet) else load_task_set(tasks, data_dir)

    def reset(self, info: dict[str, Any]) -> None:
        """Load the gold actions of ``info["task_id"]``."""
        task = self.tasks[info["task_id"]]
        actions: list[Any] = [
            tool_call_message(a.name, a.arguments, f"gold_{i}") for i, a in enumerate(task.actions)
        ]
        if task.communicate_info:
            actions.append(text_message("To confirm: " + ", ".join(task.communicate_info) + "."))
        self.actions = actions
        super().reset(info)


class LookupAgent(GoldAgent):
    """Makes the gold's lookups (and its transfer, if any), says what must be said, refuses
    the rest and stops: a correct agent on a task whose gold leaves the DB unchanged, and what
    a generated strict task's grading must reward there."""

    def reset(self, info: dict[str, Any]) -> None:
        """Load the gold actions of ``info["task_id"]`` that change nothing."""
        task = self.tasks[info["task_id"]]
        actions: list[Any] = [
            tool_call_message(a.name, a.arguments, f"lookup_{i}")
            for i, a in enumerate(task.actions)
            if a.name not in WRITE_TOOLS
        ]
        said = ", ".join(task.communicate_info)
        actions.append(text_message((f"To confirm: {said}. " if said else "") + REFUSAL))
        self.actions = actions
        ScriptedAgent.reset(self, info)


class NoOpAgent(ScriptedAgent):
    """Does nothing and stops at once: the baseline a task's grading should not reward."""

    def __init__(self) -> None:
        super().__init__([])


class TransferAgent(ScriptedAgent):
    """Transfers to a human agent at once, tells the user, then stops."""

    def __init__(self) -> None:
        super().__init__(
            [
                tool_call_message(
                    "transfer_to_human_agents", {"summary": "Customer needs help."}, "transfer"
                ),
                text_message("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."),
            ]
        )


class RandomAgent:
    """Seeded random well-formed actions: text, or calls of real tools with schema-shaped args."""

    def __init__(self, seed: int | None = None, tools: list[dict[str, Any]] | None = None) -> None:
        self.space = AssistantMessageSpace(tools)
        self.space.seed(seed)
        self._rng = np.random.default_rng(seed)

    def reset(self, info: dict[str, Any]) -> None:
        """Nothing to prepare."""

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """A random action from the action space."""
        return self.space.sample()
