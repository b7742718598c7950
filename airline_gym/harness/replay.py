"""Replay one recorded simulation's agent tool calls on a fresh database and grade it.

A replayed output that differs from the recorded tool message is reported, not fatal (spec
13.4); a simulation that cannot be graded is a :func:`failed_result` with its cause.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.domain.grading import grading
from airline_gym.domain.initial_db import start_view
from airline_gym.domain.nl_assertions import Judge, judged
from airline_gym.domain.tasks import Task
from airline_gym.domain.toolbox import execute
from airline_gym.domain.transcript import CallRecord, tool_calls
from airline_gym.harness.regrade_inputs import pristine_db
from airline_gym.harness.regrade_result import RegradeResult
from airline_gym.harness.results.metrics import judge_error_of

__all__ = ["failed_result", "regrade_simulation"]

_AGENT = "assistant"


def _as_json(content: Any) -> Any:
    """A tool output parsed as JSON when possible, else as is."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except (ValueError, RecursionError):
            return content
    return content


def _recorded_outputs(messages: list[Any], calls: list[CallRecord]) -> list[tuple[int, Any] | None]:
    """Per call, (message index, content) of the tool message answering it, or ``None``.

    A call is answered by the first unused later tool message with its id.
    """
    answers: dict[str, deque[int]] = {}
    for index, message in enumerate(messages):
        if isinstance(message, Mapping) and message.get("role") == "tool":
            call_id = str(message.get("id") or message.get("tool_call_id") or "")
            answers.setdefault(call_id, deque()).append(index)
    out: list[tuple[int, Any] | None] = []
    for call in calls:
        queue = answers.get(call.id)
        while queue and queue[0] <= call.message_index:
            queue.popleft()
        out.append((queue[0], messages[queue.popleft()].get("content")) if queue else None)
    return out


def _replay(db: Any, call: CallRecord) -> str:
    try:
        return execute(db, call.name, call.arguments).content
    except Exception as exc:  # a bug of ours on hostile arguments: report it, go on
        return f"Error: replay raised {type(exc).__name__}: {str(exc)[:300]}"


def regrade_simulation(
    sim: Mapping[str, Any],
    task: Task,
    base: PristineDB | None = None,
    reward_basis: tuple[str, ...] | None = None,
    judge: Judge | None = None,
) -> RegradeResult:
    """Replay ``sim``'s agent tool calls on a fresh database (where the task's
    ``initial_state`` starts it: its history's calls are in the simulation's messages, as the
    reference records them) and grade it against ``task``
    (on ``reward_basis`` when given, asking ``judge`` when it has ``NL_ASSERTION``)."""
    base = pristine_db() if base is None else base
    messages = list(sim["messages"])
    calls = [c for c in tool_calls(messages) if c.requestor == _AGENT]
    db = start_view(task, base, history=False)  # its state's data and actions: the calls
    mismatches: list[dict[str, Any]] = []
    for call, answer in zip(calls, _recorded_outputs(messages, calls), strict=True):
        replayed = _replay(db, call)
        index, content = answer or (call.message_index, None)
        if _as_json(content) != _as_json(replayed):
            mismatches.append(
                {
                    "index": index,
                    "call_id": call.id,
                    "name": call.name,
                    "recorded": content,
                    "replayed": replayed,
                }
            )
    termination = str(sim.get("termination_reason") or "")
    result = judged(grading(task, db, messages, termination, reward_basis, judge), judge)
    return RegradeResult(
        simulation_id=str(sim.get("id", "")),
        task_id=task.id,
        trial=_trial(sim),
        recorded_reward=_recorded_reward(sim),
        reward=result.reward,
        db_match=result.db_match,
        termination_reason=termination,
        output_mismatches=mismatches,
        grade=result,
        reward_basis=reward_basis,
        recorded_judge_error=judge_error_of(sim),
    )


def _trial(sim: Mapping[str, Any]) -> int | None:
    trial = sim.get("trial")
    return trial if isinstance(trial, int) and not isinstance(trial, bool) else None


def _recorded_reward(sim: Mapping[str, Any]) -> float | None:
    info = sim.get("reward_info")
    reward = info.get("reward") if isinstance(info, Mapping) else None
    return None if reward is None else float(reward)


def failed_result(
    sim: Mapping[str, Any], task_id: str, exc: Exception | None, file: str
) -> RegradeResult:
    """What is left of a simulation without a grade: one whose replay or grading raised
    (``exc``), or an ``infrastructure_error`` (nothing to grade, no reward to check)."""
    return RegradeResult(
        file=file,
        simulation_id=str(sim.get("id", "")),
        task_id=task_id,
        trial=_trial(sim),
        recorded_reward=_recorded_reward(sim),
        reward=0.0,
        db_match=False,
        termination_reason=str(sim.get("termination_reason") or ""),
        output_mismatches=[],
        grade=None,
        error=None if exc is None else f"{type(exc).__name__}: {str(exc)[:300]}",
        recorded_judge_error=judge_error_of(sim),
    )
