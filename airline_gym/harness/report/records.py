"""One simulation as the report's page reads it: a small index entry plus its transcript.

Messages of either format (tau2's or OpenAI's) become ``{"role", "text", "calls", "error",
"tool"}``; everything else a record carries (raw provider data, usage, audio fields) is left
out, which keeps a 1,000-simulation page small. Nothing here is escaped: the page treats every
string as text (see the template), so a ``<script>`` from a model shows as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from airline_gym.harness.results.io import JSONObject
from airline_gym.harness.results.metrics import is_success, sim_reward

__all__ = ["audit_flags", "compact_messages", "simulation_entry"]


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping))
    return json.dumps(content, ensure_ascii=False)


def _call(call: Mapping[str, Any]) -> JSONObject:
    function = call.get("function")
    if isinstance(function, Mapping):  # OpenAI shape
        name, arguments = function.get("name"), function.get("arguments")
    else:
        name, arguments = call.get("name"), call.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": str(call.get("id") or ""), "name": str(name), "arguments": arguments}


def compact_messages(messages: list[Any]) -> list[JSONObject]:
    """The transcript as the page shows it; a tool result names the tool that produced it."""
    names: dict[str, str] = {}
    out: list[JSONObject] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role") or "")
        text = _text(message.get("content"))
        entry: JSONObject = {"role": role, "text": text}
        calls = [_call(c) for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]
        if calls:
            entry["calls"] = calls
            names.update((c["id"], c["name"]) for c in calls)
        if role == "tool":
            call_id = str(message.get("id") or message.get("tool_call_id") or "")
            entry["tool"] = names.get(call_id, "")
            entry["error"] = bool(message.get("error")) or (
                isinstance(text, str) and text.startswith("Error:")
            )
        out.append(entry)
    return out


def audit_flags(sim: Mapping[str, Any]) -> list[JSONObject]:
    """The customer-audit flags recorded with ``sim`` (``user_audit``), well-formed ones only."""
    flags = sim.get("user_audit")
    if not isinstance(flags, list):
        return []
    out = []
    for flag in flags:
        if not isinstance(flag, Mapping):
            continue
        index = flag.get("message_index")
        out.append(
            {
                "kind": str(flag.get("kind") or "flag"),
                "index": index if isinstance(index, int) and not isinstance(index, bool) else None,
                "evidence": str(flag.get("evidence") or ""),
            }
        )
    return out


def simulation_entry(sim: Mapping[str, Any], grade: JSONObject) -> JSONObject:
    """Everything the page needs about one simulation (index fields first, then the detail)."""
    messages = compact_messages(list(sim.get("messages") or []))
    tools = sorted({c["name"] for m in messages for c in m.get("calls", ())})
    reward_info = sim.get("reward_info")
    recorded = reward_info.get("reward") if isinstance(reward_info, Mapping) else None
    trial = sim.get("trial")
    return {
        "task": str(sim.get("task_id")),
        "trial": trial if isinstance(trial, int) and not isinstance(trial, bool) else 0,
        "id": str(sim.get("id") or ""),
        "reward": None if recorded is None else sim_reward(sim),
        "ok": is_success(recorded),
        "termination": str(sim.get("termination_reason") or ""),
        "tools": tools,
        "tool_errors": sum(1 for m in messages if m.get("error")),
        "judge_failed": bool(grade.get("judge_error")),
        "flags": audit_flags(sim),
        "messages": messages,
        "grade": grade,
    }
