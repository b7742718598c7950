"""What both direct paths put on the wire and read back: the JSON body, headers, the reply.

:func:`encode_body` is ``json.dumps(body).encode()``, byte for byte, but the ``tools`` array
(~11 kB of nested schemas, most of an agent request's encoding time) is encoded once per
distinct value: a ``marshal`` image of it (exact: types, values and key order; ~7x cheaper
than encoding it) finds its cached JSON text. :func:`decode_reply` turns the answer into the
decoded chat completion or raises what the retry policy classifies.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Mapping
from typing import Any

from airline_gym.llm.errors import HTTPStatusFailure, UnparseableBody, one_line

__all__ = ["decode_reply", "encode_body", "error_message", "request_headers"]

_TOOLS_CACHE: dict[bytes, str] = {}
_TOOLS_CACHE_SIZE = 16  # distinct tool sets in one process: two protocols, a few custom ones


def _tools_json(tools: Any) -> str:
    try:
        key = marshal.dumps(tools)
    except ValueError:  # not plain data (a custom mapping...): no caching
        return json.dumps(tools)
    text = _TOOLS_CACHE.get(key)
    if text is None:
        if len(_TOOLS_CACHE) >= _TOOLS_CACHE_SIZE:
            _TOOLS_CACHE.clear()
        text = _TOOLS_CACHE[key] = json.dumps(tools)
    return text


def encode_body(body: Mapping[str, Any]) -> bytes:
    """``json.dumps(body).encode()`` (the same bytes), with the tools' JSON cached."""
    tools = body.get("tools")
    if not tools or not all(isinstance(k, str) for k in body):
        return json.dumps(body).encode()
    parts = [
        f"{json.dumps(key)}: {_tools_json(value) if key == 'tools' else json.dumps(value)}"
        for key, value in body.items()
    ]
    return ("{" + ", ".join(parts) + "}").encode()


def request_headers(api_key: str | None) -> dict[str, str]:
    """The headers of a chat request (a bearer key only when there is one)."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def error_message(content: bytes) -> str:
    """The ``error.message`` of an error body, else its first characters, on one line."""
    try:
        error = json.loads(content).get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return one_line(str(message))
    except (ValueError, AttributeError):
        pass
    return one_line(content[:400].decode("utf-8", "replace")) or "(empty body)"


def decode_reply(status: int, content: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    """The decoded chat completion; :class:`HTTPStatusFailure` or :class:`UnparseableBody`."""
    if status >= 300:
        raise HTTPStatusFailure(status, error_message(content), dict(headers))
    try:
        decoded = json.loads(content)
    except ValueError as exc:
        raise UnparseableBody(f"reply is not JSON ({exc}): {content[:80]!r}") from None
    except RecursionError:  # nested deeper than the interpreter's stack
        raise UnparseableBody(f"reply is JSON nested too deep: {content[:80]!r}") from None
    if not isinstance(decoded, dict):
        raise UnparseableBody(f"reply is JSON {type(decoded).__name__}, not an object")
    return decoded
