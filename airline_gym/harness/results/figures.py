"""What one simulation's record says (its reward, success, steps, a failed judge) and the
running sums of a run's figures over its simulations, read one at a time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.grading import INFRASTRUCTURE_ERROR

__all__ = [
    "RunFigures",
    "add_tally",
    "count_steps",
    "counted",
    "is_number",
    "is_success",
    "judge_error_of",
    "sim_reward",
]

_AGENT = "assistant"


def is_success(reward: Any) -> bool:
    """tau2's success test: the reward is 1 (within 1e-6); a missing reward is a failure."""
    return isinstance(reward, int | float) and (1 - 1e-6) <= reward <= (1 + 1e-6)


def sim_reward(sim: Mapping[str, Any]) -> float:
    """A simulation's recorded reward (0 when it has none)."""
    info = sim.get("reward_info")
    reward = info.get("reward") if isinstance(info, Mapping) else None
    return float(reward) if isinstance(reward, int | float) else 0.0


def judge_error_of(sim: Mapping[str, Any]) -> str | None:
    """Why the NL judge gave no verdict on ``sim``, as recorded (``reward_info.info.nl.error``,
    our judge's failure after its attempts); ``None`` when it gave one or was not asked. Such a
    reward of 0 is no grade."""
    info = sim.get("reward_info")
    details = info.get("info") if isinstance(info, Mapping) else None
    nl = details.get("nl") if isinstance(details, Mapping) else None
    error = nl.get("error") if isinstance(nl, Mapping) else None
    return " ".join(str(error).split())[:500] or None if error else None


def counted(sim: Mapping[str, Any], failures_as_zero: bool = False) -> bool:
    """Whether a simulation enters the metrics: an ``infrastructure_error`` (tau3: it failed on
    every attempt) is left out, as tau3 does, unless failures count as 0."""
    return failures_as_zero or sim.get("termination_reason") != INFRASTRUCTURE_ERROR


def add_tally(
    tallies: dict[str, list[int]], sim: Mapping[str, Any], failures_as_zero: bool
) -> None:
    """Count ``sim`` into its task's [successes, simulations] when it is counted."""
    if counted(sim, failures_as_zero):
        tally = tallies.setdefault(str(sim["task_id"]), [0, 0])
        tally[0] += is_success(sim_reward(sim))
        tally[1] += 1


def count_steps(messages: Sequence[Mapping[str, Any]]) -> int:
    """Steps as the reference counts them: agent and user messages, one per tool batch; the
    greeting is not a step."""
    steps, in_tools = 0, False
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            steps += not in_tools
            in_tools = True
            continue
        in_tools = False
        if role in ("assistant", "user") and not (index == 0 and role == "assistant"):
            steps += 1
    return steps


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class RunFigures:
    """The running sums of a run's figures, one simulation at a time (none is held): the
    counts ``summarize`` reports and each task's ``tallies`` ([successes, simulations] of the
    counted simulations, tasks in order of first appearance)."""

    def __init__(self, failures_as_zero: bool = False) -> None:
        self.failures_as_zero = failures_as_zero
        self.tallies: dict[str, list[int]] = {}
        self.simulations = self.successes = self.rewards = self.left_out = 0
        self.reward_sum = self.duration_sum = 0.0
        self.durations = self.tool_errors = self.steps = self.max_steps = 0
        self.judge_failures = 0
        self.agent_cost: float | None = None
        self.user_cost: float | None = None
        self.tokens: Counter[str] = Counter()
        self.terminations: Counter[str] = Counter()
        self.errors: list[str] = []

    def add(self, sim: Mapping[str, Any]) -> None:
        """Count one simulation in."""
        failures_as_zero = self.failures_as_zero
        add_tally(self.tallies, sim, failures_as_zero)
        self.simulations += 1
        messages = sim.get("messages") or []
        self.tool_errors += sum(1 for m in messages if m.get("role") == "tool" and m.get("error"))
        steps = count_steps(messages)
        self.steps += steps
        self.max_steps = max(self.max_steps, steps)
        for message in messages:
            usage = message.get("usage") if message.get("role") == _AGENT else None
            for key, value in (usage or {}).items():
                if key in ("prompt_tokens", "completion_tokens") and isinstance(value, int):
                    self.tokens[key] += value
        info = (sim.get("reward_info") or {}).get("info") or {}
        if not isinstance(info, Mapping) or not info.get("error"):
            info = sim.get("info") or {}  # an infrastructure_error's cause
        if isinstance(info, Mapping) and info.get("error"):
            self.errors.append(f"task {sim['task_id']} trial {sim.get('trial')}: {info['error']}")
        self.agent_cost = _plus(self.agent_cost, sim.get("agent_cost"))
        self.user_cost = _plus(self.user_cost, sim.get("user_cost"))
        if counted(sim, failures_as_zero):
            reward = sim_reward(sim)
            self.rewards += 1
            self.reward_sum += reward
            self.successes += is_success(reward)
        if not counted(sim):
            self.left_out += 1
        self.terminations[str(sim.get("termination_reason"))] += 1
        if is_number(sim.get("duration")):
            self.durations += 1
            self.duration_sum += float(sim["duration"])
        self.judge_failures += judge_error_of(sim) is not None


def _plus(total: float | None, value: Any) -> float | None:
    """``total`` plus ``value`` when it is a number (``None`` until a number is seen)."""
    if not isinstance(value, int | float):
        return total
    return value if total is None else total + value
