"""Ready-made agents for any loop over the env: ``action = agent.act(observation, info)``.

Each agent is told about a new episode with ``reset(info)`` (the ``info`` that ``env.reset``
returned) and then produces one action per step. :class:`LiteLLMAgent` is the reference
tool-calling LLM agent; an agent that cannot act raises :class:`AgentError`, which the evaluation
harness records as the termination reason ``agent_error``.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from airline_gym.domain.tasks import DEFAULT_TASK_SET, TaskSet, load_task_set
from airline_gym.env.actions import DONE_TOOL
from airline_gym.env.spaces import AssistantMessageSpace
from airline_gym.errors import AgentError
from airline_gym.llm import ChatReply, LiteLLMChatModel, LLMError, check_credentials

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


class LiteLLMAgent:
    """The reference tool-calling agent: ``info["messages"]`` and ``info["tools"]`` to an LLM.

    Each step sends the system prompt and the full history (``info["messages"]``) with the tool
    schemas including ``done`` (``info["tools"]``) through
    :class:`~airline_gym.llm.LiteLLMChatModel`, and returns the reply as an OpenAI assistant
    message dict (``content`` and/or ``tool_calls`` with JSON-string arguments). Transient
    failures, empty replies and tool calls with non-JSON arguments are retried up to
    ``max_retries`` times; then :class:`AgentError` is raised.

    ``llm_args`` may set other :class:`~airline_gym.llm.LiteLLMChatModel` fields (``backoff``,
    ``backoff_cap``, ...); any other key (``max_tokens``, ``tool_choice``, ...) is passed to
    litellm. Per episode, ``cost`` (provider-reported, ``None`` when never reported), ``usage``
    (summed token counts) and ``calls`` are tracked; ``last_cost``/``last_usage`` describe the
    latest reply. Holds no client objects: picklable.
    """

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout: float = 60,
        max_retries: int = 3,
        llm_args: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> None:
        self.model = model
        self.chat_model = LiteLLMChatModel.from_args(
            model,
            llm_args,
            api_base=api_base,
            api_key=api_key,
            temperature=temperature,
            timeout=timeout,
            max_retries=max_retries,
            seed=seed,
        )
        self.cost: float | None = None
        self.usage: dict[str, int] = {}
        self.calls = 0
        self.last_cost: float | None = None
        self.last_usage: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"LiteLLMAgent(model={self.model!r}, api_base={self.chat_model.api_base!r})"

    def check_ready(self) -> None:
        """Raise :class:`AgentError` at once (no request) when credentials are missing."""
        model = self.chat_model
        problem = check_credentials(self.model, model.api_base, model.api_key)
        if problem:
            raise AgentError(f"the LLM agent cannot run: {problem}")

    def reset(self, info: dict[str, Any]) -> None:
        """A new episode: zero the cost and usage counters."""
        self.cost = None
        self.usage = {}
        self.calls = 0
        self.last_cost = None
        self.last_usage = None

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Action:
        """Ask the model for the next assistant message."""
        messages, tools = self._inputs(info)
        try:
            reply = self.chat_model.complete(messages, tools)
        except LLMError as exc:
            raise AgentError(f"agent LLM {self.model!r} failed: {exc.cause}") from exc
        return self._message(reply)

    async def aact(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Action:
        """Async :meth:`act` (litellm's async client)."""
        messages, tools = self._inputs(info)
        try:
            reply = await self.chat_model.acomplete(messages, tools)
        except LLMError as exc:
            raise AgentError(f"agent LLM {self.model!r} failed: {exc.cause}") from exc
        return self._message(reply)

    @staticmethod
    def _inputs(info: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        try:
            return info["messages"], info["tools"]
        except (KeyError, TypeError):
            raise AgentError(
                "LiteLLMAgent needs the env's info dict (with 'messages' and 'tools')"
            ) from None

    def _message(self, reply: ChatReply) -> Action:
        self.calls += 1
        self.last_cost = reply.cost
        self.last_usage = reply.usage
        if reply.cost is not None:
            self.cost = (self.cost or 0.0) + reply.cost
        for key, value in (reply.usage or {}).items():
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value
        message: Action = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        return message
