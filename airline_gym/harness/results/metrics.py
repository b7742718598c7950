"""Figures of a run: pass^k exactly as tau2-bench computes it, its interval, and summaries."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from airline_gym.domain.grading import INFRASTRUCTURE_ERROR
from airline_gym.harness.results.breakdown import breakdown
from airline_gym.harness.results.intervals import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    Interval,
    task_pass_hat_k,
)
from airline_gym.harness.results.io import JSONObject, Results

__all__ = [
    "counted",
    "disagreeing_tasks",
    "info_of",
    "is_success",
    "judge_error_of",
    "pass_hat_k",
    "pass_hat_k_intervals",
    "sim_reward",
    "summarize",
    "task_outcomes",
    "task_sort_key",
    "task_successes",
]

_AGENT = "assistant"
_DIGITS = re.compile(r"(\d+)")


def is_success(reward: Any) -> bool:
    """tau2's success test: the reward is 1 (within 1e-6); a missing reward is a failure."""
    return isinstance(reward, int | float) and (1 - 1e-6) <= reward <= (1 + 1e-6)


def task_sort_key(task_id: str) -> tuple[tuple[int, int, str], ...]:
    """Natural order: runs of digits compare as numbers (``g0_2`` before ``g0_10``), so numeric
    ids come in numeric order, before the others.

    >>> sorted(["g0_10", "g0_2", "10", "9", "g1_0"], key=task_sort_key)
    ['9', '10', 'g0_2', 'g0_10', 'g1_0']
    """
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(task_id)
    )


def _tasks(results: Any) -> list[Any]:
    """The tasks a results file embeds (none for bare simulations)."""
    if isinstance(results, Results):
        return results.tasks
    if isinstance(results, Mapping):
        return list(results.get("tasks") or [])
    return []


def _simulations(results: Results | Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[Any]:
    if isinstance(results, Results):
        return results.simulations
    if isinstance(results, Mapping):
        return list(results.get("simulations") or [])
    return list(results)


def info_of(results: Any) -> Mapping[str, Any]:
    """The run's ``info`` (empty for bare simulations)."""
    info = results.info if isinstance(results, Results) else None
    if isinstance(results, Mapping):
        info = results.get("info")
    return info if isinstance(info, Mapping) else {}


def _num_trials(results: Any) -> int | None:
    value = info_of(results).get("num_trials")
    return value if isinstance(value, int) and value > 0 else None


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


def task_outcomes(results: Any, count_failures_as_zero: bool = False) -> dict[str, list[float]]:
    """Task id -> the rewards of its simulations, tasks in order of first appearance
    (``infrastructure_error`` ones left out unless ``count_failures_as_zero``)."""
    out: dict[str, list[float]] = {}
    for sim in _simulations(results):
        if counted(sim, count_failures_as_zero):
            out.setdefault(str(sim["task_id"]), []).append(sim_reward(sim))
    return out


def pass_hat_k(results: Any, count_failures_as_zero: bool = False) -> dict[int, float]:
    """pass^k for k = 1..K, exactly as tau2-bench's ``agent_metrics`` computes it.

    For a task with n simulations of which c succeeded (reward 1), pass^k = C(c, k) / C(n, k);
    the metric is the mean over tasks. K is ``info.num_trials`` (the largest trial count when the
    file has none), lowered to the smallest number of simulations of any task, so that every
    task has at least k trials. ``results`` is a :class:`Results`, its dict, or simulations.
    ``infrastructure_error`` simulations are left out (tau3's rule) unless
    ``count_failures_as_zero``, which counts them as failures.
    """
    outcomes = task_outcomes(results, count_failures_as_zero)
    if not outcomes:
        return {}
    max_k = _num_trials(results) or max(len(r) for r in outcomes.values())
    max_k = min(max_k, min(len(r) for r in outcomes.values()))
    out = {}
    for k in range(1, max_k + 1):
        values = [
            math.comb(sum(map(is_success, rewards)), k) / math.comb(len(rewards), k)
            for rewards in outcomes.values()
        ]
        out[k] = sum(values) / len(values)
    return out


def task_successes(
    results: Any, count_failures_as_zero: bool = False
) -> dict[str, tuple[int, int]]:
    """Task id -> (successes, simulations), tasks in :func:`task_sort_key` order."""
    outcomes = task_outcomes(results, count_failures_as_zero)
    return {
        task: (sum(map(is_success, outcomes[task])), len(outcomes[task]))
        for task in sorted(outcomes, key=task_sort_key)
    }


def disagreeing_tasks(results: Any, count_failures_as_zero: bool = False) -> list[str]:
    """Tasks whose trials disagree (some succeeded, some failed), in :func:`task_sort_key` order."""
    tallies = task_successes(results, count_failures_as_zero)
    return [task for task, (c, n) in tallies.items() if 0 < c < n]


def pass_hat_k_intervals(
    results: Any,
    *,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
    count_failures_as_zero: bool = False,
) -> dict[int, Interval]:
    """pass^k for every k :func:`pass_hat_k` reports, each with a 95% interval over tasks.

    The interval is a percentile bootstrap over tasks (``bootstrap``'s settings; seeded: the
    same file always gives the same interval) of the tasks' own pass^k, ``C(c, k) / C(n, k)``;
    the estimate is :func:`pass_hat_k`'s value (up to float rounding). Tasks are taken in
    :func:`task_sort_key` order, so the order of simulations in a file does not matter.

    >>> run = [{"task_id": t, "reward_info": {"reward": r}} for t, r in enumerate([1, 0, 1, 1])]
    >>> pass_hat_k_intervals(run)
    {1: Interval(estimate=0.75, low=0.25, high=1.0)}
    """
    tallies = task_successes(results, count_failures_as_zero)
    return {
        k: bootstrap.interval([task_pass_hat_k(c, n, k) for c, n in tallies.values()])
        for k in pass_hat_k(results, count_failures_as_zero)
    }


def _count_steps(messages: Sequence[Mapping[str, Any]]) -> int:
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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean, ``None`` for no values."""
    return sum(values) / len(values) if values else None


def _total(values: Iterable[Any]) -> float | None:
    numbers = [v for v in values if isinstance(v, int | float)]
    return sum(numbers) if numbers else None


def summarize(results: Any, count_failures_as_zero: bool = False) -> JSONObject:
    """The figures of a run: pass^k, mean reward, terminations, errors, steps, cost, tokens.

    ``infrastructure_errors`` counts the simulations that failed on every attempt (tau3);
    ``failures`` says the rule applied to them: ``"left out"`` of pass^k and the mean reward
    (default, as tau3) or ``"counted as 0"``.
    """
    sims = _simulations(results)
    outcomes = task_outcomes(sims, count_failures_as_zero)
    failed = [s for s in sims if not counted(s)]
    tool_errors = [
        sum(1 for m in s.get("messages") or [] if m.get("role") == "tool" and m.get("error"))
        for s in sims
    ]
    steps = [_count_steps(s.get("messages") or []) for s in sims]
    tokens: Counter[str] = Counter()
    for sim in sims:
        for message in sim.get("messages") or []:
            usage = message.get("usage") if message.get("role") == _AGENT else None
            for key, value in (usage or {}).items():
                if key in ("prompt_tokens", "completion_tokens") and isinstance(value, int):
                    tokens[key] += value
    errors = []
    for sim in sims:
        info = (sim.get("reward_info") or {}).get("info") or {}
        if not isinstance(info, Mapping) or not info.get("error"):
            info = sim.get("info") or {}  # an infrastructure_error's cause
        if isinstance(info, Mapping) and info.get("error"):
            errors.append(f"task {sim['task_id']} trial {sim.get('trial')}: {info['error']}")
    agent_cost = _total(s.get("agent_cost") for s in sims)
    cache = info_of(results).get("user_cache")
    rewards = [sim_reward(s) for s in sims if counted(s, count_failures_as_zero)]
    zero = count_failures_as_zero
    return {
        "simulations": len(sims),
        "tasks": len(outcomes),
        "trials": max((len(r) for r in outcomes.values()), default=0),
        "pass_hat_k": pass_hat_k(results, zero),
        "pass_hat_k_interval": {
            k: {"low": v.low, "high": v.high}
            for k, v in pass_hat_k_intervals(results, count_failures_as_zero=zero).items()
        },
        "task_successes": {
            task: {"successes": c, "trials": n}
            for task, (c, n) in task_successes(sims, zero).items()
        },
        "disagreeing_tasks": disagreeing_tasks(sims, zero),
        "breakdown": breakdown(_tasks(results), task_successes(sims, zero)),
        "user_cache": dict(cache) if isinstance(cache, Mapping) else None,
        "successes": sum(map(is_success, rewards)),
        "mean_reward": mean(rewards),
        "terminations": dict(Counter(str(s.get("termination_reason")) for s in sims)),
        "tool_errors_per_episode": mean(tool_errors),
        "steps_per_episode": mean(steps),
        "max_steps_seen": max(steps, default=0),
        "agent_cost": agent_cost,
        "agent_cost_per_episode": None if agent_cost is None else agent_cost / len(sims),
        "user_cost": _total(s.get("user_cost") for s in sims),
        "agent_tokens": dict(tokens) or None,
        "duration_per_episode": mean(
            [float(s["duration"]) for s in sims if _is_number(s.get("duration"))]
        ),
        "errors": errors,
        "benchmark": info_of(results).get("benchmark", "tau2"),
        **_protocol(info_of(results)),
        "infrastructure_errors": len(failed),
        "judge_failures": sum(judge_error_of(s) is not None for s in sims),
        "failures": "counted as 0" if count_failures_as_zero else "left out",
    }


def _protocol(info: Mapping[str, Any]) -> JSONObject:
    """The run's protocol and whether it compares with the leaderboard (only ``leaderboard``
    does), when the file says which protocol it ran."""
    protocol = info.get("protocol")
    if not isinstance(protocol, str):
        return {}
    comparable = info.get("leaderboard_comparable", protocol == "leaderboard")
    return {"protocol": protocol, "leaderboard_comparable": comparable is True}
