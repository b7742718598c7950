"""Turn an OpenAI-format chat completion (a dict or litellm's object) into a :class:`ChatReply`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from airline_gym.llm.errors import BadReply

__all__ = ["ChatReply", "parse_reply"]


@dataclass
class ChatReply:
    """One assistant reply; ``tool_calls`` are plain OpenAI-format dicts."""

    content: str | None
    tool_calls: list[dict[str, Any]]
    cost: float | None = None
    usage: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None


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


def _cost_of(response: Any) -> float | None:
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, Mapping) else None
    return float(cost) if isinstance(cost, int | float) else None


def parse_reply(
    response: Any, *, require_content: bool, validate_tool_json: bool, cost: float | None = None
) -> ChatReply:
    """The reply in ``response``; :class:`BadReply` when it is unusable (retried by the caller).

    ``cost`` is the provider-reported cost when the caller knows it; else litellm's
    ``_hidden_params["response_cost"]`` if present, else ``None``.
    """
    choices = _field(response, "choices") or []
    if not choices or not isinstance(choices, list):
        raise BadReply("reply has no choices")
    message = _field(choices[0], "message")
    content = _field(message, "content")
    if content is not None and not isinstance(content, str):
        raise BadReply(f"reply content is {type(content).__name__}, not text")
    raw_calls = _field(message, "tool_calls") or []
    if not isinstance(raw_calls, list):
        raise BadReply("reply tool_calls is not a list")
    tool_calls = [_tool_call_dict(tc, i) for i, tc in enumerate(raw_calls)]
    if validate_tool_json:
        for tc in tool_calls:
            problem = _json_object_error(tc["function"]["arguments"])
            if problem:
                name, args = tc["function"]["name"], tc["function"]["arguments"]
                raise BadReply(f"arguments of tool call {name!r} are {problem}: {args[:80]!r}")
    if require_content and not tool_calls and not (content and content.strip()):
        raise BadReply("empty reply (no content and no tool calls)")
    usage = _dump(_field(response, "usage"))
    if usage is not None:
        usage = {k: v for k, v in usage.items() if k.endswith("tokens") and v is not None}
    return ChatReply(
        content=content,
        tool_calls=tool_calls,
        cost=cost if cost is not None else _cost_of(response),
        usage=usage,
        raw=_dump(response),
    )
