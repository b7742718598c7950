"""Read what grading needs from a conversation in OpenAI or tau2 message format."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallRecord:
    """One tool call found in a transcript."""

    id: str
    name: str
    arguments: Any  # a dict when decodable, else the raw value
    requestor: str
    message_index: int


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def decode_arguments(raw: Any) -> Any:
    """Arguments as a dict when they are a JSON object string or a dict.

    Text that is not JSON, or JSON nested too deeply for Python to decode, is returned as is.
    """
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            return raw
    return {} if raw is None else raw


def tool_calls(messages: Iterable[Any]) -> Iterator[CallRecord]:
    """Every tool call in order, from assistant (or user) messages of either format."""
    for index, message in enumerate(messages):
        for call in _get(message, "tool_calls") or ():
            function = _get(call, "function")
            if function is not None:  # OpenAI: {"id", "type", "function": {"name", "arguments"}}
                name, raw = _get(function, "name"), _get(function, "arguments")
            else:  # tau2: {"id", "name", "arguments": {...}, "requestor"}
                name, raw = _get(call, "name"), _get(call, "arguments")
            yield CallRecord(
                id=str(_get(call, "id") or ""),
                name=str(name),
                arguments=decode_arguments(raw),
                requestor=_get(call, "requestor") or _get(message, "role") or "assistant",
                message_index=index,
            )


def assistant_texts(messages: Iterable[Any]) -> Iterator[tuple[int, str]]:
    """(index, text) of every assistant message with non-blank text, tool-call messages included."""
    for index, message in enumerate(messages):
        if _get(message, "role") != "assistant":
            continue
        content = _get(message, "content")
        if isinstance(content, list):  # OpenAI content parts
            content = "".join(str(_get(p, "text") or "") for p in content)
        if isinstance(content, str) and content.strip():
            yield index, content
