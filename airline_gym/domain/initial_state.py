"""A task's ``initial_state``, checked when the task set loads, as the reference reads it.

tau2's ``Task`` model types ``initial_state`` as ``initialization_data`` (``agent_data`` and
``user_data``: objects), ``initialization_actions`` (``env_type``, ``func_name``,
``arguments``) and ``message_history`` (its message models); :func:`check_initial_state` refuses
what that model refuses (with pydantic's lax reading of numbers and booleans in the fields
nothing reads), and what the reference could not start a run from: a history its orchestrator
or its environment's ``set_state`` rejects (a tool result that follows no call, a call without
its results, a message with neither text nor calls, a system message), and what the airline
domain does not have (user tools, user data, an action that is not one of its 14 tools).
Applying it is :mod:`airline_gym.domain.initial_db`; :func:`history` is the history in the
OpenAI form the episode keeps. One ``ConfigError`` naming the task and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from airline_gym.domain.tools import TOOLS
from airline_gym.domain.validation import described
from airline_gym.errors import ConfigError

__all__ = ["check_initial_state", "history"]

_TRUE_FALSE = {"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"}


# --- pydantic's lax reading of the fields nothing here reads ---------------------------------
def _lax_int(value: Any) -> bool:
    if value is None or isinstance(value, int):
        return True
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, str):
        try:
            int(value.strip())
        except ValueError:
            return False
        return True
    return False


def _lax_float(value: Any) -> bool:
    if value is None or isinstance(value, int | float):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


def _lax_bool(value: Any) -> bool:
    if isinstance(value, bool) or value in (0, 1):
        return True
    return isinstance(value, str) and value.strip().lower() in _TRUE_FALSE


def _optional(value: Any, kind: type) -> bool:
    return value is None or isinstance(value, kind)


_META = {  # the message fields nothing here reads: what the reference's model accepts
    "turn_idx": _lax_int,
    "timestamp": lambda v: _optional(v, str),
    "cost": _lax_float,
    "usage": lambda v: _optional(v, dict),
    "raw_data": lambda v: _optional(v, dict),
}


class _Refused(Exception):
    """One problem with the state, as the field's path and what is wrong."""


def _need(ok: bool, path: str, what: str, value: Any) -> None:
    if not ok:
        raise _Refused(f"'{path}' must be {what}, not {described(value)}")


# --- the model -------------------------------------------------------------------------------
def _tool_call(call: Any, path: str) -> None:
    _need(isinstance(call, dict), path, "an object", call)
    _need(isinstance(call.get("id", ""), str), f"{path}.id", "a string", call.get("id"))
    _need(isinstance(call.get("name"), str), f"{path}.name", "a string", call.get("name"))
    arguments = call.get("arguments")
    _need(isinstance(arguments, dict), f"{path}.arguments", "an object", arguments)
    requestor = call.get("requestor", "assistant")
    _need(requestor in ("user", "assistant"), f"{path}.requestor", "user or assistant", requestor)


def _message(message: Any, path: str) -> str:
    """The message's kind (``assistant``, ``user``, ``tool``, ``tools``, ``system``)."""
    _need(isinstance(message, dict), path, "an object", message)
    role = message.get("role")
    _need(role in ("system", "assistant", "user", "tool"), f"{path}.role", "a role", role)
    for name, fits in _META.items():
        if name in message and not (role == "tool" and name in ("cost", "usage", "raw_data")):
            _need(
                fits(message[name]),
                f"{path}.{name}",
                "as the reference's model reads",
                message[name],
            )
    if "content" in message:
        _need(_optional(message["content"], str), f"{path}.content", "a string", message["content"])
    if role in ("assistant", "user"):
        calls = message.get("tool_calls")
        _need(_optional(calls, list), f"{path}.tool_calls", "a list", calls)
        for i, call in enumerate(calls or []):
            _tool_call(call, f"{path}.tool_calls[{i}]")
        return str(role)
    if role == "tool" and (isinstance(message.get("id"), str) or "tool_messages" not in message):
        _need(isinstance(message.get("id"), str), f"{path}.id", "a string", message.get("id"))
        requestor = message.get("requestor", "assistant")
        _need(
            requestor in ("user", "assistant"), f"{path}.requestor", "user or assistant", requestor
        )
        _need(
            _lax_bool(message.get("error", False)),
            f"{path}.error",
            "true or false",
            message.get("error"),
        )
        return "tool"
    if role == "tool":
        inner = message.get("tool_messages")
        _need(isinstance(inner, list), f"{path}.tool_messages", "a list", inner)
        for i, item in enumerate(inner):
            _need(
                isinstance(item, dict) and item.get("role") == "tool",
                f"{path}.tool_messages[{i}]",
                "a tool message",
                item,
            )
            _message(item, f"{path}.tool_messages[{i}]")
        return "tools"
    return "system"


def _model(state: Any) -> None:
    """What the reference's ``InitialState`` model refuses (unknown keys are ignored there)."""
    _need(isinstance(state, dict), "initial_state", "an object or null", state)
    data = state.get("initialization_data")
    if data is not None:
        _need(isinstance(data, dict), "initial_state.initialization_data", "an object", data)
        for side in ("agent_data", "user_data"):
            path = f"initial_state.initialization_data.{side}"
            _need(_optional(data.get(side), dict), path, "an object", data.get(side))
    actions = state.get("initialization_actions")
    path = "initial_state.initialization_actions"
    _need(_optional(actions, list), path, "a list", actions)
    for i, action in enumerate(actions or []):
        where = f"{path}[{i}]"
        _need(isinstance(action, dict), where, "an object", action)
        env_type = action.get("env_type")
        _need(env_type in ("user", "assistant"), f"{where}.env_type", "user or assistant", env_type)
        _need(
            isinstance(action.get("func_name"), str),
            f"{where}.func_name",
            "a string",
            action.get("func_name"),
        )
        _need(
            isinstance(action.get("arguments"), dict),
            f"{where}.arguments",
            "an object",
            action.get("arguments"),
        )
    messages = state.get("message_history")
    _need(_optional(messages, list), "initial_state.message_history", "a list", messages)


# --- what the reference's run could not start from -------------------------------------------
def _has_text(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, str) and content.strip() != ""


def _history(messages: list[Any]) -> None:
    """The orchestrator's ``validate_message_history`` and ``set_state``'s pairing of each tool
    call with the tool message after it, plus what the airline domain lacks."""
    kinds = [_message(m, f"initial_state.message_history[{i}]") for i, m in enumerate(messages)]
    pending: list[str] = []  # ids of the calls whose results come next, in order
    for i, (message, kind) in enumerate(zip(messages, kinds, strict=True)):
        path = f"initial_state.message_history[{i}]"
        if kind in ("system", "tools"):
            what = "a system message" if kind == "system" else "a list of tool messages"
            raise _Refused(f"'{path}' is {what}: the reference starts no run from one")
        if kind == "tool":
            if not pending:
                raise _Refused(f"'{path}' is a tool result that follows no tool call")
            expected = pending.pop(0)
            if message["id"] != expected:
                raise _Refused(
                    f"'{path}.id' is {message['id']!r:.60}, the call's is {expected!r:.60}"
                )
            if message.get("requestor", "assistant") != "assistant":
                raise _Refused(f"'{path}.requestor' must be assistant, the caller")
            continue
        if pending:
            raise _Refused(f"'{path}' comes before the results of {len(pending)} tool call(s)")
        calls = message.get("tool_calls")
        if calls is None and not _has_text(message):
            raise _Refused(f"'{path}' has neither text nor tool calls")
        if calls is not None and (kind == "user" or not calls):
            why = "the airline domain has no user tools" if calls else "an empty list"
            raise _Refused(f"'{path}.tool_calls' is {why}: give text, or calls of the agent")
        for j, call in enumerate(calls or []):
            if call.get("requestor", "assistant") != "assistant":
                raise _Refused(f"'{path}.tool_calls[{j}].requestor' must be assistant")
        pending = [str(call.get("id", "")) for call in calls or []]
    if pending:
        raise _Refused(f"the last {len(pending)} tool call(s) of the history have no results")


def _airline(state: Mapping[str, Any]) -> None:
    data = state.get("initialization_data") or {}
    if data.get("user_data") is not None:
        raise _Refused(
            "'initial_state.initialization_data.user_data' is set: the airline domain has no "
            "user database"
        )
    agent = data.get("agent_data") or {}
    unknown = sorted(str(k)[:40] for k in agent if k not in ("flights", "users", "reservations"))
    if unknown:
        raise _Refused(
            f"'initial_state.initialization_data.agent_data' has {', '.join(unknown)}: the "
            "airline database has flights, users and reservations"
        )
    for i, action in enumerate(state.get("initialization_actions") or []):
        path = f"initial_state.initialization_actions[{i}]"
        if action["env_type"] != "assistant":
            raise _Refused(f"'{path}.env_type' is user: the airline domain has no user tools")
        if action["func_name"] not in TOOLS:
            raise _Refused(
                f"'{path}.func_name' {action['func_name']!r:.60} is not one of the airline "
                "domain's 14 tools"
            )


def check_initial_state(raw: Mapping[str, Any], where: str) -> None:
    """Raise a one-line ``ConfigError`` (``where``: the task) for an ``initial_state`` the
    reference refuses or cannot start a run from (see the module docstring)."""
    state = raw.get("initial_state")
    if state is None:
        return
    try:
        _model(state)
        _airline(state)
        _history(state.get("message_history") or [])
    except _Refused as problem:
        raise ConfigError(f"{where}: {problem}"[:600]) from None


def history(state: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """An ``initial_state``'s ``message_history`` (checked) in the OpenAI form an episode
    keeps."""
    out: list[dict[str, Any]] = []
    for message in (state or {}).get("message_history") or []:
        role = message["role"]
        if role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": message["id"], "content": message.get("content")}
            )
            continue
        entry: dict[str, Any] = {"role": role, "content": message.get("content")}
        if message.get("tool_calls"):
            entry["tool_calls"] = [
                {
                    "id": str(call.get("id", "")),
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
                for call in message["tool_calls"]
            ]
        out.append(entry)
    return out
