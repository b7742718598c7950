"""Ready-made agents for any loop over the env: ``action = agent.act(observation, info)``.

Each agent is told about a new episode with ``reset(info)`` (the ``info`` that ``env.reset``
returned) and then produces one action per step.
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any, Protocol

import numpy as np

from airline_gym.actions import DONE_TOOL
from airline_gym.domain.tasks import DEFAULT_TASK_SET, TaskSet, load_task_set
from airline_gym.spaces import AssistantMessageSpace

Action = dict[str, Any]


class Agent(Protocol):
    """Anything that can play the agent side of an episode."""

    def reset(self, info: dict[str, Any]) -> None:
        """A new episode begins; ``info`` is what ``env.reset`` returned."""

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """The next action."""


def tool_call_message(name: str, arguments: dict[str, Any], call_id: str) -> Action:
    """An assistant message with one tool call, in OpenAI format."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def text_message(text: str) -> Action:
    """An assistant message to the user."""
    return {"role": "assistant", "content": text}


DONE = tool_call_message(DONE_TOOL, {}, "done")


class ScriptedAgent:
    """Plays a fixed list of actions, then ``done``."""

    def __init__(self, actions: list[Any]) -> None:
        self.actions = list(actions)
        self._queue: deque[Any] = deque()

    def reset(self, info: dict[str, Any]) -> None:
        """Restart the script."""
        self._queue = deque(self.actions)

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """The next scripted action, or ``done`` when the script is over."""
        return self._queue.popleft() if self._queue else DONE


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
