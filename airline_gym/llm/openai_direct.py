"""The common case, cheaply: an OpenAI-compatible server at ``api_base``, reached directly.

Used instead of litellm when the model is ``openai/...`` with an ``api_base`` and the request
uses only plain chat parameters; anything else goes through litellm. The request body is the
one litellm would send (same keys, same order, ``None`` values dropped from messages), which
``tests/llm/test_direct.py`` checks against litellm itself. One keep-alive connection pool per
event loop (:mod:`~airline_gym.llm.http11`); nothing litellm does per call (logging, cost
lookups, pydantic objects) is done here. Measured on this path, CPU per request: httpx
2.6-3.6 ms, aiohttp and h11 on asyncio streams ~0.45 ms (why h11: :mod:`~airline_gym.llm.http11`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from airline_gym.llm.http11 import post
from airline_gym.llm.wire import decode_reply, encode_body, request_headers

__all__ = ["DIRECT_PARAMS", "direct_body", "post_chat"]

log = logging.getLogger(__name__)

#: Optional parameters sent as-is, in the order litellm writes them into the body.
DIRECT_PARAMS = (
    "top_p",
    "n",
    "stop",
    "max_tokens",
    "max_completion_tokens",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "response_format",
    "seed",
    "tools",
    "tool_choice",
    "logprobs",
    "top_logprobs",
    "parallel_tool_calls",
    "reasoning_effort",
)
_ALLOWED_EXTRA = frozenset(DIRECT_PARAMS) | {"extra_body", "caching"}
_ROLES = frozenset({"system", "user", "assistant", "tool"})
# model families litellm rewrites parameters for (max_tokens, temperature...): litellm only
_REWRITTEN_FAMILIES = ("o1", "o3", "o4", "gpt-5", "codex", "computer-use")


def _plain_message(message: Any) -> dict[str, Any] | None:
    """``message`` without its ``None`` values, or ``None`` if litellm would rewrite it."""
    if not isinstance(message, dict) or message.get("role") not in _ROLES:
        return None
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return None  # content parts (images, files) are litellm's business
    return {k: v for k, v in message.items() if v is not None}


def direct_body(
    model: str,
    messages: list[dict[str, Any]],
    temperature: float,
    params: Mapping[str, Any],
) -> dict[str, Any] | None:
    """The JSON body litellm would send for ``openai/<name>``, or ``None`` when not eligible.

    ``params`` holds ``seed``, ``tools``, ``tool_choice`` and the user's extra arguments.
    """
    if not model.startswith("openai/"):
        return None
    name = model[len("openai/") :]
    if name.startswith(_REWRITTEN_FAMILIES) or not _ALLOWED_EXTRA.issuperset(params):
        return None
    plain = [_plain_message(m) for m in messages]
    if any(m is None for m in plain):
        return None
    body: dict[str, Any] = {"model": name, "messages": plain, "temperature": temperature}
    for key in DIRECT_PARAMS:
        value = params.get(key)
        if value is not None:
            body[key] = value
    extra_body = params.get("extra_body")
    if extra_body is not None:
        if not isinstance(extra_body, Mapping):
            return None
        body.update(extra_body)
    return body


async def post_chat(
    api_base: str, api_key: str | None, body: dict[str, Any], timeout: float | None
) -> dict[str, Any]:
    """POST ``body`` to ``{api_base}/chat/completions``; the decoded JSON reply.

    ``timeout`` bounds the whole request; a request that is cancelled closes its connection.
    """
    url = api_base.rstrip("/") + "/chat/completions"
    status, content, headers = await post(url, encode_body(body), request_headers(api_key), timeout)
    return decode_reply(status, content, headers)
