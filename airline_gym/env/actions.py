"""Turn whatever an agent produced into one assistant message: text and/or tool calls.

Accepted: an OpenAI chat-completions assistant message dict (canonical), litellm/OpenAI message
objects, a bare tool-call dict ``{"name", "arguments"}``, and tau2-gym strings (a JSON tool call,
the functional form ``get_user_details(user_id='x')``, or plain text to the user).

A string that looks like a tool call but does not parse becomes a tool call whose result is an
error (it costs an error, as any failed call), in both protocols: a JSON object naming a
``"name"`` that is not valid JSON, a known tool's name opening a call that never closes
(``get_user_details(user_id=``) or whose arguments are not literals, and a snake_case call of
an unknown tool (``bogus_tool(x=1)``: "Tool ... not found"). The reference's gym sends all of
these to the customer as text (spec §8); we answer them as the failed calls they are.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.schemas import DONE_TOOL
from airline_gym.domain.tools import TOOLS
from airline_gym.domain.validation import short_repr
from airline_gym.errors import ActionError

__all__ = ["DONE_TOOL", "ActionError", "AgentMessage", "ToolCall", "parse_action"]
_FUNCTIONAL = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$", re.DOTALL)
_CALL_START = re.compile(r"^(\w+)\s*\(")
_SNAKE_CALL = re.compile(r"^[a-z_][a-z0-9_]*\(")  # an unknown tool is read only in this spelling
_JSON_NAME = re.compile(r'"name"\s*:\s*"(\w+)"')
MAX_ACTION_CHARS = 1_000_000
#: Longest tool name read (OpenAI allows 64 characters); a longer one is an invalid action.
MAX_NAME_CHARS = 256
#: Longest argument text read (room for a megabyte in each string argument).
MAX_ARGUMENT_CHARS = 4_000_000


@dataclass(frozen=True)
class ToolCall:
    """One requested tool call; ``arguments`` is the raw JSON string or object."""

    id: str
    name: str
    arguments: Any
    #: Set when the call could not be read: it is not run, its result is ``Error: {error}``.
    error: str | None = None

    def arguments_json(self) -> str:
        """Arguments as the JSON string OpenAI messages carry."""
        if self.error is not None:
            return "{}"
        if isinstance(self.arguments, str):
            return self.arguments
        try:
            return json.dumps(self.arguments)
        except (TypeError, ValueError, RecursionError):  # not JSON data, too deep, huge ints
            return json.dumps(short_repr(self.arguments, 200))


@dataclass(frozen=True)
class AgentMessage:
    """One assistant turn."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = field(default=())

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI chat-completions form."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json()},
                }
                for c in self.tool_calls
            ]
        return message


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _as_mapping(obj: Any) -> Any:
    """litellm / openai / pydantic message objects to plain data."""
    for method in ("model_dump", "dict", "to_dict"):
        dump = getattr(obj, method, None)
        if callable(dump) and not isinstance(obj, Mapping):
            try:
                return dump()
            except Exception:
                break
    return obj


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # OpenAI content parts
        return "".join(str(_get(p, "text") or "") for p in content)
    raise ActionError(f"message content must be a string, got {type(content).__name__}")


def _from_message(message: Any, new_id: Any) -> AgentMessage:
    content = _text(_get(message, "content"))
    if content is not None and len(content) > MAX_ACTION_CHARS:
        raise ActionError(
            f"message too long ({len(content)} characters; at most {MAX_ACTION_CHARS})"
        )
    raw_calls = _get(message, "tool_calls") or []
    if not isinstance(raw_calls, Sequence) or isinstance(raw_calls, (str, bytes)):
        raise ActionError("tool_calls must be a list of tool calls")
    raw_calls = [_as_mapping(raw) for raw in raw_calls]
    given = {i for raw in raw_calls if isinstance(i := _get(raw, "id"), str)}
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for raw in raw_calls:
        function = _as_mapping(_get(raw, "function"))
        source = function if function is not None else raw
        name = _get(source, "name")
        if not isinstance(name, str) or not name:
            raise ActionError("every tool call needs a function name")
        _check_size("tool name", name, MAX_NAME_CHARS)
        call_id = _get(raw, "id")
        if isinstance(call_id, str):
            _check_size("tool call id", call_id, MAX_ACTION_CHARS)
        arguments = _get(source, "arguments")
        if isinstance(arguments, (str, bytes)):
            _check_size("tool call arguments", arguments, MAX_ARGUMENT_CHARS)
        if not isinstance(call_id, str) or not call_id or call_id in seen:
            call_id = new_id()
            for suffix in itertools.count(1):  # never reuse an id the agent chose
                if call_id not in given and call_id not in seen:
                    break
                candidate = new_id()
                call_id = candidate if candidate != call_id else f"{candidate}_{suffix}"
        seen.add(call_id)
        calls.append(ToolCall(call_id, name, arguments))
    if not calls and not (content and content.strip()):
        raise ActionError("empty action: send text to the user, or one or more tool calls")
    return AgentMessage(content, tuple(calls))


def _check_size(what: str, value: str | bytes, limit: int) -> None:
    if len(value) > limit:
        raise ActionError(f"{what} too long ({len(value):,} characters; at most {limit:,})")


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name):  # tau2 reads a bare identifier as a string
        return {"True": True, "False": False, "None": None}.get(node.id, node.id)
    return ast.literal_eval(node)


def _from_functional(name: str, body: str, new_id: Any) -> AgentMessage:
    try:
        call = ast.parse(f"f({body})", mode="eval").body
        assert isinstance(call, ast.Call)
        if call.args:
            raise ActionError(f"{name}(...): pass arguments by name, like {name}(user_id='...')")
        arguments = {kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg}
    except ActionError as exc:
        return _unreadable(name, str(exc), new_id)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        return _unreadable(name, f"could not parse the call {name}(...): {exc}", new_id)
    return AgentMessage(None, (ToolCall(new_id(), name, arguments),))


def _unreadable(name: str, error: str, new_id: Any) -> AgentMessage:
    """A tool call that could not be read: it is answered with ``Error: {error}``."""
    return AgentMessage(None, (ToolCall(new_id(), name, None, error),))


def _known(name: str) -> bool:
    return name in TOOLS or name == DONE_TOOL


def _from_string(text: str, new_id: Any) -> AgentMessage:
    stripped = text.strip()
    if not stripped:
        raise ActionError("empty action: send text to the user, or one or more tool calls")
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            return parse_action(data, new_id)
        named = _JSON_NAME.search(stripped)
        if data is None and named:
            name = named.group(1)
            return _unreadable(name, f"could not parse the tool call {name} (invalid JSON)", new_id)
    match = _FUNCTIONAL.match(text)
    if match and (_known(match.group(1)) or _SNAKE_CALL.match(stripped)):
        return _from_functional(match.group(1), match.group(2), new_id)
    opening = _CALL_START.match(stripped)
    if opening and _known(opening.group(1)):
        name = opening.group(1)
        return _unreadable(name, f"could not parse the call {name}(...): no closing ')'", new_id)
    return AgentMessage(text, ())


def parse_action(action: Any, new_id: Any) -> AgentMessage:
    """Parse an agent action; ``new_id()`` supplies ids for calls that have none.

    Raises :class:`ActionError` when the action is not a message at all.
    """
    if isinstance(action, (bytes, bytearray)):
        action = action.decode("utf-8", errors="replace")
    if isinstance(action, str):
        if len(action) > MAX_ACTION_CHARS:
            raise ActionError(
                f"action too long ({len(action)} characters; at most {MAX_ACTION_CHARS})"
            )
        return _from_string(action, new_id)
    action = _as_mapping(action)
    if isinstance(action, Mapping):
        role = action.get("role")
        if role not in (None, "assistant"):
            raise ActionError(f"an action is an assistant message; got role {role!r}")
        if "tool_calls" not in action and "content" not in action and "name" in action:
            return _from_message({"tool_calls": [action]}, new_id)  # bare {"name", "arguments"}
        return _from_message(action, new_id)
    if action is None:
        raise ActionError("empty action: send text to the user, or one or more tool calls")
    if hasattr(action, "tool_calls") or hasattr(action, "content"):  # message-like objects
        role = getattr(action, "role", None)
        if role not in (None, "assistant"):
            raise ActionError(f"an action is an assistant message; got role {role!r}")
        return _from_message(action, new_id)
    raise ActionError(
        f"unsupported action type {type(action).__name__}: send an OpenAI assistant message dict "
        "or a string"
    )
