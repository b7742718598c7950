"""tau2-bench's message format: our OpenAI-format episode messages as tau2 messages.

Tool calls become ``{"id", "name", "arguments": dict, "requestor": "assistant"}`` and tool
results ``{"id", "role": "tool", "content", "requestor": "assistant", "error"}``. A call of our
``done`` tool becomes the text ``###STOP###``, as tau2's gym agent records it; arguments that are
not a JSON object are kept as ``{"_raw_arguments": ...}`` (such a call is an error either way).
Results files store these messages, and the NL-assertion judge reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.prompts import STOP
from airline_gym.domain.schemas import DONE_TOOL
from airline_gym.domain.transcript import decode_arguments

__all__ = ["AGENT", "RAW_ARGUMENTS", "tau2_messages"]

JSONObject = dict[str, Any]

AGENT = "assistant"
RAW_ARGUMENTS = "_raw_arguments"


def _tau2_call(call: Mapping[str, Any]) -> JSONObject:
    function = call.get("function") or {}
    raw = function.get("arguments") if function else call.get("arguments")
    arguments = decode_arguments(raw)
    if not isinstance(arguments, dict):
        arguments = {RAW_ARGUMENTS: raw}
    return {
        "id": str(call.get("id") or ""),
        "name": str(function.get("name") if function else call.get("name")),
        "arguments": arguments,
        "requestor": AGENT,
    }


def _call_name(call: Mapping[str, Any]) -> Any:
    function = call.get("function")
    return function.get("name") if isinstance(function, Mapping) else call.get("name")


def tau2_messages(
    messages: Sequence[Mapping[str, Any]], meta: Sequence[Mapping[str, Any]] | None = None
) -> list[JSONObject]:
    """OpenAI-format episode messages as tau2 messages.

    ``meta[i]`` may give ``timestamp``, ``cost``, ``usage`` and ``raw_data`` for ``messages[i]``.
    Our ``system`` error notes (invalid actions) are dropped; ``done`` becomes ``###STOP###``.
    """
    out: list[JSONObject] = []
    done_ids: set[str] = set()

    def add(message: JSONObject, extra: Mapping[str, Any]) -> None:
        message["turn_idx"] = len(out)
        message["timestamp"] = extra.get("timestamp")
        if message["role"] != "tool":
            message["cost"] = extra.get("cost")
            message["usage"] = extra.get("usage")
            message["raw_data"] = extra.get("raw_data")
        out.append(message)

    stop_after_tools: Mapping[str, Any] | None = None
    for index, message in enumerate(messages):
        extra = meta[index] if meta is not None and index < len(meta) else {}
        role = message.get("role")
        if role != "tool" and stop_after_tools is not None:
            add({"role": AGENT, "content": STOP, "tool_calls": None}, stop_after_tools)
            stop_after_tools = None
        if role == "assistant":
            calls = list(message.get("tool_calls") or [])
            done = [c for c in calls if _call_name(c) == DONE_TOOL]
            done_ids.update(str(c.get("id") or "") for c in done)
            kept = [_tau2_call(c) for c in calls if _call_name(c) != DONE_TOOL]
            content = message.get("content")
            if done and not kept:  # done alone (with or without text): one stop message
                content = f"{content}\n{STOP}" if content and content.strip() else STOP
            elif done:
                stop_after_tools = extra
            add({"role": AGENT, "content": content, "tool_calls": kept or None}, extra)
        elif role == "user":
            add({"role": "user", "content": message.get("content"), "tool_calls": None}, extra)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or message.get("id") or "")
            if call_id in done_ids:
                continue
            content = message.get("content")
            error = isinstance(content, str) and content.startswith("Error:")
            tool = {
                "id": call_id,
                "role": "tool",
                "content": content,
                "requestor": AGENT,
                "error": error,
            }
            add(tool, extra)
    if stop_after_tools is not None:
        add({"role": AGENT, "content": STOP, "tool_calls": None}, stop_after_tools)
    return out
