"""Chat-model access for agents and the simulated customer, with bounded, explicit retries.

This is the only module that imports ``litellm``, and it does so lazily (inside functions):
``import airline_gym.llm`` is cheap. Retries are ours alone: litellm's and the OpenAI SDK's
own retries are switched off (``num_retries=0, max_retries=0``) so that a failing endpoint
costs at most ``max_retries + 1`` requests, each bounded by ``timeout``.
"""

from __future__ import annotations

import copy
import email.utils
import json
import os
import random
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from airline_gym.errors import ConfigError, LLMError

__all__ = [
    "ChatModel",
    "ChatReply",
    "LLMError",
    "LiteLLMChatModel",
    "check_credentials",
]

#: litellm kwargs that :class:`LiteLLMChatModel` manages itself (not allowed in ``extra``).
RESERVED_KWARGS = frozenset(
    {
        "model",
        "messages",
        "tools",
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

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_MAX_DETAIL = 400
_jitter = random.Random()  # private RNG: never perturbs the user's seeded global `random`


@dataclass
class ChatReply:
    """One assistant reply; ``tool_calls`` are plain OpenAI-format dicts."""

    content: str | None
    tool_calls: list[dict[str, Any]]
    cost: float | None = None
    usage: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None


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


def _litellm() -> ModuleType:
    """Import litellm on first use (offline-safe cost map, no stdout debug banners)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class _BadReply(Exception):
    """A syntactically fine HTTP response whose content is unusable (transient)."""


@dataclass
class _Failure:
    retryable: bool
    kind: str
    detail: str
    status: int | None = None
    retry_after: float | None = None


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            return headers
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (delta or HTTP date), if present."""
    headers = _headers_of(exc)
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
        value = lowered.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (ValueError, TypeError, OverflowError):
        return None


def _classify(exc: BaseException, timeout: float) -> _Failure:
    """Decide whether ``exc`` is worth retrying and describe it."""
    if isinstance(exc, _BadReply):
        return _Failure(True, "unusable reply", str(exc))
    detail = _one_line(str(exc) or type(exc).__name__)
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if (
        name in ("Timeout", "APITimeoutError")
        or isinstance(exc, TimeoutError)
        or ("timeout" in name.lower() and status in (None, 408))
    ):
        return _Failure(True, f"timeout ({timeout:g} s)", detail, status)
    # litellm reports a dropped/refused connection as InternalServerError("Connection error.")
    # with status 500, and a 200 with a non-JSON body as a 500 carrying the decode error.
    if (
        "connection" in name.lower()
        or "Connection error" in detail
        or isinstance(exc, ConnectionError)
        or _is_transport_error(exc)
    ):
        return _Failure(True, "connection error", detail, status)
    if "Expecting value" in detail or "JSONDecodeError" in detail:
        return _Failure(True, "unparseable response body", detail, status)
    if status is None:
        return _Failure(False, name, detail)
    if status == 429:
        if "insufficient_quota" in detail:  # OpenAI's "out of credit" is a 429 too
            return _Failure(False, "HTTP 429 (insufficient quota)", detail, status)
        return _Failure(True, "HTTP 429", detail, status, _retry_after(exc))
    if status in _RETRYABLE_STATUS or status >= 500:
        return _Failure(True, f"HTTP {status}", detail, status, _retry_after(exc))
    if status in (401, 403):
        detail += " (check the API key; see airline_gym.llm.check_credentials)"
    return _Failure(False, f"HTTP {status}", detail, status)


def _is_transport_error(exc: BaseException) -> bool:
    try:
        import httpx
    except ImportError:  # pragma: no cover - litellm depends on httpx
        return False
    return isinstance(exc, httpx.TransportError)


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _tool_call_dict(tc: Any, index: int) -> dict[str, Any]:
    fn = _field(tc, "function")
    args = _field(fn, "arguments")
    if args is None or (isinstance(args, str) and not args.strip()):
        args = "{}"  # some servers send "" for argument-less tools
    elif not isinstance(args, str):
        args = json.dumps(args)
    return {
        "id": _field(tc, "id") or f"call_{index}_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": _field(fn, "name") or "", "arguments": args},
    }


def _json_object_error(args: str) -> str | None:
    try:
        parsed = json.loads(args)
    except ValueError as exc:
        return f"not valid JSON ({exc})"
    return None if isinstance(parsed, dict) else f"JSON {type(parsed).__name__}, not an object"


def _dump(obj: Any) -> dict[str, Any] | None:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return dict(obj)
    try:
        dumped = obj.model_dump()
    except Exception:
        return None
    return dumped if isinstance(dumped, dict) else None


@dataclass
class LiteLLMChatModel:
    """A :class:`ChatModel` backed by ``litellm.completion`` / ``litellm.acompletion``.

    Retries (up to ``max_retries``) on timeouts, connection errors, HTTP 408/409/429/5xx,
    empty replies (when ``require_content``) and tool calls whose arguments are not a JSON
    object (when ``validate_tool_json``). Backoff is exponential from ``backoff`` seconds with
    jitter, capped at ``backoff_cap``; a 429's ``Retry-After`` is honoured (also capped).
    Other 4xx errors raise :class:`LLMError` at once. Holds no client objects: picklable.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    seed: int | None = None
    timeout: float = 60.0
    max_retries: int = 3
    backoff: float = 1.0
    backoff_cap: float = 30.0
    require_content: bool = True
    validate_tool_json: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clash = RESERVED_KWARGS.intersection(self.extra)
        if clash:
            raise ConfigError(f"extra must not set {sorted(clash)}; use the dataclass fields")
        if self.max_retries < 0 or self.timeout <= 0 or self.backoff < 0:
            raise ConfigError("need max_retries >= 0, timeout > 0 and backoff >= 0")

    # -- public API ------------------------------------------------------------------------

    @classmethod
    def from_args(
        cls, model: str, llm_args: Mapping[str, Any] | None = None, **overrides: Any
    ) -> LiteLLMChatModel:
        """Build from tau2-style ``llm_args``: our fields set directly, other keys to litellm.

        ``base_url``/``num_retries`` are accepted for ``api_base``/``max_retries``; ``overrides``
        (e.g. explicit constructor arguments) win over ``llm_args``.
        """
        names = {f.name for f in dataclass_fields(cls)} - {"model", "extra"}
        aliases = {"base_url": "api_base", "num_retries": "max_retries"}
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
        settings.update(overrides)
        return cls(model=model, extra=extra, **settings)

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Return the next assistant reply, retrying transient failures."""
        litellm = _litellm()
        attempt = 0
        while True:
            attempt += 1
            try:
                request = self._request(messages, tools)
                return self._parse(_with_deadline(litellm.completion, request, self.timeout))
            except Exception as exc:
                delay = self._on_failure(exc, attempt)
            time.sleep(delay)

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Async :meth:`complete` via ``litellm.acompletion`` (same retry policy)."""
        import asyncio

        litellm = _litellm()
        attempt = 0
        while True:
            attempt += 1
            try:
                request = self._request(messages, tools)
                # litellm's timeout bounds each socket read; wait_for bounds the whole request
                response = await asyncio.wait_for(litellm.acompletion(**request), self.timeout)
                return self._parse(response)
            except Exception as exc:
                delay = self._on_failure(exc, attempt)
            await asyncio.sleep(delay)

    # -- internals -------------------------------------------------------------------------

    @property
    def _target(self) -> str:
        return self.api_base or self.model

    def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """litellm kwargs; copies inputs since litellm may rewrite messages in place."""
        kwargs: dict[str, Any] = {"caching": False, **self.extra}
        kwargs.update(
            model=self.model,
            messages=copy.deepcopy(messages),
            temperature=self.temperature,
            timeout=self.timeout,
            num_retries=0,  # litellm's own retry wrapper: off
            max_retries=0,  # the OpenAI SDK's retries (default 2): off
        )
        if tools:
            kwargs["tools"] = copy.deepcopy(tools)
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        if self.api_key is not None:
            kwargs["api_key"] = self.api_key
        return kwargs

    def _parse(self, response: Any) -> ChatReply:
        choices = _field(response, "choices") or []
        if not choices:
            raise _BadReply("reply has no choices")
        message = _field(choices[0], "message")
        content = _field(message, "content")
        raw_calls = _field(message, "tool_calls") or []
        tool_calls = [_tool_call_dict(tc, i) for i, tc in enumerate(raw_calls)]
        if self.validate_tool_json:
            for tc in tool_calls:
                problem = _json_object_error(tc["function"]["arguments"])
                if problem:
                    name, args = tc["function"]["name"], tc["function"]["arguments"]
                    raise _BadReply(f"arguments of tool call {name!r} are {problem}: {args[:80]!r}")
        if self.require_content and not tool_calls and not (content and content.strip()):
            raise _BadReply("empty reply (no content and no tool calls)")
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, Mapping) else None
        usage = _dump(_field(response, "usage"))
        if usage is not None:
            usage = {k: v for k, v in usage.items() if k.endswith("tokens") and v is not None}
        return ChatReply(
            content=content,
            tool_calls=tool_calls,
            cost=float(cost) if isinstance(cost, int | float) else None,
            usage=usage,
            raw=_dump(response),
        )

    def _on_failure(self, exc: Exception, attempt: int) -> float:
        """Seconds to wait before the next attempt, or raise :class:`LLMError`."""
        failure = _classify(exc, self.timeout)
        if not failure.retryable or attempt > self.max_retries:
            plural = "s" if attempt != 1 else ""
            why = "" if failure.retryable else ", not retryable"
            cause = (
                f"{failure.kind} from {self._target} after {attempt} attempt{plural}{why}: "
                f"{failure.detail}"
            )
            raise LLMError(
                cause,
                attempts=attempt,
                status_code=failure.status,
                retryable=failure.retryable,
            ) from exc
        if failure.retry_after is not None:
            return min(self.backoff_cap, failure.retry_after)
        exp = self.backoff * 2.0 ** (attempt - 1)
        return min(self.backoff_cap, exp * _jitter.uniform(0.5, 1.5))


def _with_deadline(call: Any, kwargs: dict[str, Any], seconds: float) -> Any:
    """``call(**kwargs)`` bounded in total wall time (litellm's timeout bounds each read only).

    The call runs in a daemon thread; past the deadline it is abandoned (its socket closes when
    its own read timeout fires) and :class:`TimeoutError` is raised, which is retried.
    """
    outcome: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, call(**kwargs)))
        except BaseException as exc:  # re-raised in the caller's thread
            outcome.append((False, exc))
        done.set()

    threading.Thread(target=run, daemon=True, name="airline-gym-llm").start()
    if not done.wait(seconds):
        raise TimeoutError(f"no complete response within {seconds:g} s")
    ok, value = outcome[0]
    if ok:
        return value
    raise value


def check_credentials(
    model: str, api_base: str | None = None, api_key: str | None = None
) -> str | None:
    """``None`` if ``model`` looks callable, else a one-line hint naming what to set.

    A custom ``api_base`` counts as usable (local servers need no key).
    """
    if api_base:
        return None
    alternative = (
        "or pass api_base=... for a local OpenAI-compatible server, or run offline with "
        'user="scripted"'
    )
    litellm = _litellm()
    try:
        litellm.get_llm_provider(model=model)
    except Exception:
        return (
            f"cannot tell which provider serves model {model!r}: use a litellm model name such "
            f"as 'openai/gpt-4.1' or 'anthropic/claude-sonnet-4-20250514', {alternative}"
        )
    try:
        info = litellm.validate_environment(model=model, api_key=api_key)
    except Exception as exc:
        return f"cannot check credentials for model {model!r} ({exc}); {alternative}"
    missing = [str(k) for k in info.get("missing_keys") or []]
    if info.get("keys_in_environment") and not missing:
        return None
    needed = ", ".join(missing) if missing else "its provider's API key"
    return (
        f"model {model!r} needs credentials: set {needed} in the environment "
        f"(e.g. export {missing[0] if missing else 'PROVIDER_API_KEY'}=...), {alternative}"
    )
