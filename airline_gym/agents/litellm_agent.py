"""``LiteLLMAgent``: the reference's tool-calling LLM agent, on any litellm model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airline_gym.agents.base import Action, AgentError
from airline_gym.llm import ChatReply, LiteLLMChatModel, LLMError, check_credentials


class LiteLLMAgent:
    """Sends ``info["messages"]`` and ``info["tools"]`` to an LLM, as tau2's ``llm_agent`` does.

    Each step sends the system prompt and the full history (``info["messages"]``; under the
    env's ``leaderboard`` protocol already in the reference's shape) with the env's tools
    (``info["tools"]``: the reference's 14, plus ``done`` under ``gym``) through
    :class:`~airline_gym.llm.LiteLLMChatModel`, with the reference's request arguments:
    ``tool_choice="auto"``, ``temperature`` 0, ``num_retries`` 3 and no request timeout unless
    one is set. The reply comes back as an OpenAI assistant message dict (``content`` and/or
    ``tool_calls`` with JSON-string arguments). Transient failures, empty replies and tool calls
    with non-JSON arguments are retried ``num_retries`` times; then :class:`AgentError` is
    raised (the harness ends the episode as ``agent_error`` with the cause).

    Every setting after ``model`` is a keyword argument. ``llm_args`` may set other
    :class:`~airline_gym.llm.LiteLLMChatModel` fields (``backoff``, ...); any other key
    (``max_tokens``, ...) is passed to litellm. Per episode, ``cost`` (provider-reported,
    ``None`` when never reported), ``usage`` (summed token counts) and ``calls`` are tracked;
    ``last_cost``/``last_usage`` describe the latest reply. Holds no client objects: picklable.
    """

    def __init__(
        self,
        model: str,
        *,
        llm_args: Mapping[str, Any] | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout: float | None = None,
        num_retries: int = 3,
        seed: int | None = None,
        tool_choice: str | None = "auto",
        max_retries: int | None = None,
    ) -> None:
        self.model = model
        overrides: dict[str, Any] = {
            "api_base": api_base,
            "api_key": api_key,
            "temperature": temperature,
            "timeout": timeout,
            "num_retries": num_retries if max_retries is None else max_retries,
            "tool_choice": tool_choice,
            "seed": seed,
        }
        given = dict(llm_args or {})
        for key in ("api_base", "api_key", "timeout", "seed"):  # None: let llm_args decide
            if overrides[key] is None and key in given:
                del overrides[key]
        self.chat_model = LiteLLMChatModel.from_args(model, given, **overrides)
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
