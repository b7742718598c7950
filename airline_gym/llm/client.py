"""``LiteLLMChatModel``: one chat request with bounded, explicit retries, blocking or async."""

from __future__ import annotations

import asyncio
import copy
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, Protocol, runtime_checkable

from airline_gym.errors import ConfigError
from airline_gym.llm.background import run_blocking
from airline_gym.llm.credentials import (
    check_credentials,
    effective_api_key,
    goes_through_a_proxy,
)
from airline_gym.llm.errors import LLMError, MissingCredentials, classify
from airline_gym.llm.litellm_backend import acomplete_litellm, litellm_loaded, load_litellm
from airline_gym.llm.openai_blocking import post_chat_blocking
from airline_gym.llm.openai_direct import direct_body, post_chat
from airline_gym.llm.pricing import usage_cost
from airline_gym.llm.replies import ChatReply, parse_reply
from airline_gym.llm.time_limit import time_limit
from airline_gym.numbers import check_finite, finite_number

__all__ = ["RESERVED_KWARGS", "ChatModel", "LiteLLMChatModel"]

log = logging.getLogger(__name__)

#: litellm kwargs that :class:`LiteLLMChatModel` manages itself (not allowed in ``extra``).
RESERVED_KWARGS = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "temperature",
        "seed",
        "timeout",
        "api_base",
        "base_url",
        "api_key",
        "num_retries",
        "max_retries",
        "stream",
    }
)

_jitter = random.Random()  # private RNG: never perturbs the user's seeded global `random`
_credential_problems: dict[tuple[str, str | None], str | None] = {}


def _positive_finite(value: Any) -> bool:
    try:
        return finite_number("", value) > 0
    except ConfigError:
        return False


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a chat history (+ optional tool schemas) into a :class:`ChatReply`."""

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Return the next assistant reply."""
        ...

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Async variant of :meth:`complete`."""
        ...


@dataclass(init=False)
class LiteLLMChatModel:
    """A :class:`ChatModel` that reaches any provider through litellm.

    ``num_retries`` counts retries: ``num_retries=3`` makes at most 4 requests, whatever is
    installed (litellm's own makes 4, or 7 when ``tenacity`` is importable: it then retries
    the SDK's retried call n times more). ``max_retries`` is another name for it. Retried: timeouts,
    connection errors, HTTP 408/409/429/5xx, empty replies (when ``require_content``) and tool
    calls whose arguments are not a JSON object (when ``validate_tool_json``). Backoff is
    exponential from ``backoff`` seconds with jitter, capped at ``backoff_cap``; a 429's
    ``Retry-After`` is honoured (also capped). Other errors raise :class:`LLMError` at once, as
    does a hosted model with no credentials (no request is made). ``timeout`` bounds each request
    in total; ``None`` (the default, like the reference) never cuts one short. ``tool_choice`` is
    sent only when set. With ``api_base`` and no key, a placeholder key is sent (local servers
    need none). With ``fast_path`` (default), an ``openai/...`` model at an ``api_base`` is
    reached directly over a pooled keep-alive connection, with the body litellm would send;
    everything else goes through litellm. Holds no client objects: picklable.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    seed: int | None = None
    timeout: float | None = None
    num_retries: int = 3
    tool_choice: str | None = None
    backoff: float = 1.0
    backoff_cap: float = 30.0
    require_content: bool = True
    validate_tool_json: bool = True
    fast_path: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        timeout: float | None = None,
        num_retries: int | None = None,
        tool_choice: str | None = None,
        backoff: float = 1.0,
        backoff_cap: float = 30.0,
        require_content: bool = True,
        validate_tool_json: bool = True,
        fast_path: bool = True,
        extra: Mapping[str, Any] | None = None,
        *,
        max_retries: int | None = None,
    ) -> None:
        if num_retries is not None and max_retries is not None and num_retries != max_retries:
            raise ConfigError("num_retries and max_retries name one setting; pass one of them")
        retries = num_retries if num_retries is not None else max_retries
        given = locals()
        for spec in dataclass_fields(self):  # every field is a parameter of the same name
            setattr(self, spec.name, given[spec.name])
        self.num_retries = 3 if retries is None else retries
        self.extra = dict(extra or {})
        clash = RESERVED_KWARGS.intersection(self.extra)
        if clash:
            raise ConfigError(f"extra must not set {sorted(clash)}; use the dataclass fields")
        self._check_numbers()

    def _check_numbers(self) -> None:
        """Refuse settings that are not finite numbers (NaN, inf) or out of range, in one line."""
        if self.num_retries < 0 or self.backoff < 0:
            raise ConfigError("need num_retries >= 0 and backoff >= 0")
        for name in ("temperature", "seed"):
            if getattr(self, name) is not None:
                finite_number(name, getattr(self, name))
        finite_number("backoff", self.backoff)
        finite_number("backoff_cap", self.backoff_cap)
        if self.timeout is not None and not _positive_finite(self.timeout):
            raise ConfigError(
                f"timeout must be a finite number of seconds > 0, or None for no limit; "
                f"got {self.timeout!r}"
            )
        check_finite(f"{self.model}'s settings", self.extra)

    @property
    def max_retries(self) -> int:
        """Another name for :attr:`num_retries`."""
        return self.num_retries

    @max_retries.setter
    def max_retries(self, value: int) -> None:
        self.num_retries = value

    # -- public API ------------------------------------------------------------------------

    @classmethod
    def from_args(
        cls, model: str, llm_args: Mapping[str, Any] | None = None, **overrides: Any
    ) -> LiteLLMChatModel:
        """Build from tau2-style ``llm_args``: our fields set directly, other keys to litellm.

        ``base_url``/``max_retries`` are accepted for ``api_base``/``num_retries``;
        ``overrides`` (e.g. explicit constructor arguments) win over ``llm_args``.
        """
        names = {f.name for f in dataclass_fields(cls)} - {"model", "extra"}
        aliases = {"base_url": "api_base", "max_retries": "num_retries"}
        settings: dict[str, Any] = {}
        extra: dict[str, Any] = dict((llm_args or {}).get("extra") or {})
        for key, value in (llm_args or {}).items():
            if key == "extra":
                continue
            name = aliases.get(key, key)
            if name in names:
                settings[name] = value
            else:
                extra[key] = value
        for key, value in overrides.items():
            settings[aliases.get(key, key)] = value
        return cls(model=model, extra=extra, **settings)

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Return the next assistant reply, retrying transient failures (blocking)."""
        body = self.direct_body(messages, tools)
        if body is None:  # litellm's async path, run on the shared background loop
            return run_blocking(self.acomplete(messages, tools))
        assert self.api_base is not None
        api_key = effective_api_key(self.model, self.api_base, self.api_key)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = post_chat_blocking(self.api_base, api_key, body, self.timeout)
                return self._reply(response, usage_cost(self.model, response.get("usage")))
            except Exception as exc:
                delay = self._on_failure(exc, attempt)
            time.sleep(delay)

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Return the next assistant reply, retrying transient failures."""
        body = self.direct_body(messages, tools)
        if body is None and not litellm_loaded():  # import it outside any request's budget
            await asyncio.to_thread(load_litellm)
        attempt = 0
        while True:
            attempt += 1
            try:
                self._check_credentials()
                if body is not None:
                    async with time_limit(self.timeout):
                        return await self._send_direct(body)
                request = self.litellm_request(messages, tools)
                async with time_limit(self.timeout):
                    response = await acomplete_litellm(request)
                return self._reply(response)
            except Exception as exc:
                delay = self._on_failure(exc, attempt)
            await asyncio.sleep(delay)

    # -- internals -------------------------------------------------------------------------

    @property
    def _target(self) -> str:
        return self.api_base or self.model

    def _check_credentials(self) -> None:
        """Fail before any request when a hosted model has no key (checked once per process)."""
        if self.api_base:
            return
        key = (self.model, self.api_key)
        if key not in _credential_problems:
            _credential_problems[key] = check_credentials(self.model, None, self.api_key)
        problem = _credential_problems[key]
        if problem:
            raise MissingCredentials(problem)

    def _reply(self, response: Any, cost: float | None = None) -> ChatReply:
        return parse_reply(
            response,
            require_content=self.require_content,
            validate_tool_json=self.validate_tool_json,
            cost=cost,
        )

    async def _send_direct(self, body: dict[str, Any]) -> ChatReply:
        assert self.api_base is not None
        api_key = effective_api_key(self.model, self.api_base, self.api_key)
        response = await post_chat(self.api_base, api_key, body, self.timeout)
        return self._reply(response, usage_cost(self.model, response.get("usage")))

    def direct_body(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any] | None:
        """The body sent on the direct path, or ``None`` when this request goes via litellm."""
        if not self.fast_path or not self.api_base or goes_through_a_proxy(self.api_base):
            return None
        params = dict(self.extra)
        params.update(seed=self.seed, tools=tools or None, tool_choice=self.tool_choice)
        return direct_body(self.model, messages, self.temperature, params)

    def litellm_request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The ``litellm.acompletion`` kwargs; copies inputs since litellm may rewrite them."""
        kwargs: dict[str, Any] = {"caching": False, **self.extra}
        kwargs.update(
            model=self.model,
            messages=copy.deepcopy(messages),
            temperature=self.temperature,
            num_retries=0,  # litellm's own retry wrapper: off (ours is explicit)
            max_retries=0,  # the OpenAI SDK's retries (default 2): off
        )
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        if tools:
            kwargs["tools"] = copy.deepcopy(tools)
        if self.tool_choice is not None:
            kwargs["tool_choice"] = self.tool_choice
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        api_key = effective_api_key(self.model, self.api_base, self.api_key)
        if api_key is not None:
            kwargs["api_key"] = api_key
        return kwargs

    def _on_failure(self, exc: Exception, attempt: int) -> float:
        """Seconds to wait before the next attempt, or raise :class:`LLMError`."""
        failure = classify(exc, self.timeout)
        if isinstance(exc, MissingCredentials):
            raise LLMError(failure.detail, attempts=0) from exc
        if not failure.retryable or attempt > self.num_retries:
            plural = "s" if attempt != 1 else ""
            why = "" if failure.retryable else ", not retryable"
            cause = (
                f"{failure.kind} from {self._target} after {attempt} attempt{plural}{why}: "
                f"{failure.detail}"
            )
            log.warning("LLM call failed for good: %s", cause)
            raise LLMError(
                cause,
                attempts=attempt,
                status_code=failure.status,
                retryable=failure.retryable,
            ) from exc
        if failure.retry_after is not None:
            delay = min(self.backoff_cap, failure.retry_after)
        else:
            exp = self.backoff * 2.0 ** (attempt - 1)
            delay = min(self.backoff_cap, exp * _jitter.uniform(0.5, 1.5))
        log.info(
            "LLM attempt %d/%d to %s failed (%s: %s); retrying in %.2f s",
            attempt,
            self.num_retries + 1,
            self._target,
            failure.kind,
            failure.detail,
            delay,
        )
        return delay
