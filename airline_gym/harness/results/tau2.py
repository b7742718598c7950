"""tau2-bench's record formats: episode messages, ``reward_info`` and whole simulations.

Our OpenAI-format episode messages become tau2 messages with :func:`tau2_messages`: tool calls
``{"id", "name", "arguments": dict, "requestor": "assistant"}`` and tool results ``{"id",
"role": "tool", "content", "requestor": "assistant", "error"}``. A call of our ``done`` tool
becomes the text ``###STOP###``, as tau2's gym agent records it; arguments that are not a JSON
object are kept as ``{"_raw_arguments": ...}`` (such a call is an error either way).
:func:`simulation_record` turns a runner :class:`~airline_gym.harness.runner.EpisodeResult` into
one simulation of a results file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.grading import GRADED_TERMINATIONS, INFRASTRUCTURE_ERROR, Grade
from airline_gym.domain.prompts import STOP
from airline_gym.domain.tasks import Task
from airline_gym.domain.transcript import decode_arguments
from airline_gym.env.actions import DONE_TOOL
from airline_gym.harness.results.io import JSONObject
from airline_gym.harness.runner import EpisodeResult

__all__ = ["RAW_ARGUMENTS", "reward_info", "simulation_record", "tau2_messages"]

_AGENT = "assistant"
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
        "requestor": _AGENT,
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
            add({"role": _AGENT, "content": STOP, "tool_calls": None}, stop_after_tools)
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
            add({"role": _AGENT, "content": content, "tool_calls": kept or None}, extra)
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
                "requestor": _AGENT,
                "error": error,
            }
            add(tool, extra)
    if stop_after_tools is not None:
        add({"role": _AGENT, "content": STOP, "tool_calls": None}, stop_after_tools)
    return out


def reward_info(
    grade: Grade | Mapping[str, Any],
    task: Task,
    messages: Sequence[Mapping[str, Any]] = (),
    error: str | None = None,
) -> JSONObject:
    """tau2's ``reward_info`` for a grade (a :class:`Grade` or its ``to_dict()``).

    ``messages`` are the graded (OpenAI) messages, used to quote where each communicate string
    was said; ``error`` is an agent/user failure cause.
    """
    g = grade.to_dict() if isinstance(grade, Grade) else grade
    if g.get("termination_reason") not in GRADED_TERMINATIONS:
        info: JSONObject = {"note": g.get("note", "")}
        if error:
            info["error"] = error
        return {
            "reward": 0.0,
            "db_check": None,
            "env_assertions": None,
            "action_checks": None,
            "nl_assertions": None,
            "communicate_checks": None,
            "reward_basis": None,
            "reward_breakdown": None,
            "info": info,
        }
    checks = None
    if task.communicate_info:
        checks = []
        for check in g["communicate_checks"]:
            index = check.get("message_index")
            if check["met"] and index is not None:
                said = messages[index].get("content") if messages else ""
                why = f"Information '{check['info']}' communicated in the message:\n '{said}'"
            else:
                why = f"Information '{check['info']}' not communicated."
            checks.append({"info": check["info"], "met": check["met"], "justification": why})
    gold = {a.action_id: a for a in task.actions}
    action_checks = []
    for check in g["action_checks"]:
        action = gold.get(check["action_id"])
        action_checks.append(
            {
                "action": {
                    "action_id": check["action_id"],
                    "requestor": _AGENT,
                    "name": check["name"],
                    "arguments": check["arguments"],
                    "info": None,
                    "compare_args": None
                    if action is None or action.compare_args is None
                    else list(action.compare_args),
                },
                "action_match": check["met"],
                "action_reward": float(check["met"]),
            }
        )
    diff = g.get("db_diff_text") or []
    communicate_info = (
        None if task.communicate_info else {"note": "No communicate_info to evaluate"}
    )
    return {
        "reward": g["reward"],
        "db_check": {"db_match": g["db_match"], "db_reward": g["db_reward"]},
        "env_assertions": [],
        "action_checks": action_checks,
        "nl_assertions": None,
        "communicate_checks": checks,
        "reward_basis": list(g["reward_basis"]),
        "reward_breakdown": dict(g["breakdown"]),
        "info": {
            "env": {"db_diff": list(diff)} if diff else None,
            "nl": None,
            "communicate": communicate_info,
            "action": None,
        },
    }


def simulation_record(
    result: EpisodeResult, task: Task, trial: int = 0, sim_id: str = ""
) -> JSONObject:
    """One simulation of a tau2 results file from a finished episode of ``task``.

    An ``infrastructure_error`` (tau3: every attempt failed) is recorded as tau3 records it: no
    reward (``reward_info`` null), no messages, the cause and the attempts in ``info``.
    """
    transcript = result.messages[1:]  # without the system prompt
    failed = result.termination_reason == INFRASTRUCTURE_ERROR
    record: JSONObject = {
        "id": sim_id,
        "task_id": result.task_id,
        "timestamp": result.end_time,
        "start_time": result.start_time,
        "end_time": result.end_time,
        "duration": result.duration,
        "termination_reason": result.termination_reason,
        "agent_cost": None if failed else result.agent_cost,
        "user_cost": None if failed else result.user_cost,
        "reward_info": None
        if failed
        else reward_info(result.reward_info, task, transcript, result.error),
        "messages": [] if failed else tau2_messages(transcript, result.meta),
        "trial": trial,
        "seed": result.seed,
    }
    if failed:
        record["info"] = {"error": result.error, **result.reward_info}
    return record
