"""Figures of a run: pass^k exactly as tau2-bench computes it, its interval, and summaries."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from airline_gym.harness.results.breakdown import breakdown
from airline_gym.harness.results.figures import (
    RunFigures,
    add_tally,
    counted,
    is_success,
    judge_error_of,
    sim_reward,
)
from airline_gym.harness.results.intervals import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    Interval,
    task_pass_hat_k,
)
from airline_gym.harness.results.io import JSONObject, Results
from airline_gym.numbers import whole_number

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

_DIGITS = re.compile(r"([0-9]+)")


def task_sort_key(task_id: str) -> tuple[tuple[int, int, str], ...]:
    """Natural order: runs of ASCII digits compare as numbers (``g0_2`` before ``g0_10``), so
    numeric ids come in numeric order, before the others; a run of more than 4,000 digits
    compares as text (``int`` refuses such a run).

    >>> sorted(["g0_10", "g0_2", "10", "9", "g1_0"], key=task_sort_key)
    ['9', '10', 'g0_2', 'g0_10', 'g1_0']
    """
    parts = [(part, whole_number(part, 4000)) for part in _DIGITS.split(task_id)]
    return tuple((1, 0, part) if number is None else (0, number, "") for part, number in parts)


def _tasks(results: Any) -> list[Any]:
    """The tasks a results file embeds (none for bare simulations)."""
    if isinstance(results, Results):
        return results.tasks
    if isinstance(results, Mapping):
        return list(results.get("tasks") or [])
    return []


def _simulations(
    results: Results | Mapping[str, Any] | Iterable[Mapping[str, Any]],
) -> Sequence[Any]:
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
    tallies = _tallies(_simulations(results), count_failures_as_zero)
    return _pass_hat_k_of(tallies, _num_trials(results))


def _tallies(sims: Iterable[Mapping[str, Any]], failures_as_zero: bool) -> dict[str, list[int]]:
    """Task id -> [successes, simulations] of the counted simulations, tasks in order of first
    appearance: all pass^k needs, in one pass over ``sims``."""
    out: dict[str, list[int]] = {}
    for sim in sims:
        add_tally(out, sim, failures_as_zero)
    return out


def _pass_hat_k_of(
    tallies: Mapping[str, Sequence[int]], num_trials: int | None
) -> dict[int, float]:
    """:func:`pass_hat_k` from :func:`_tallies` (each k costs one term per task)."""
    if not tallies:
        return {}
    max_k = num_trials or max(n for _, n in tallies.values())
    max_k = min(max_k, min(n for _, n in tallies.values()))
    out = {}
    for k in range(1, max_k + 1):
        values = [math.comb(c, k) / math.comb(n, k) for c, n in tallies.values()]
        out[k] = sum(values) / len(values)
    return out


def _in_task_order(tallies: Mapping[str, Sequence[int]]) -> dict[str, tuple[int, int]]:
    return {
        task: (tallies[task][0], tallies[task][1]) for task in sorted(tallies, key=task_sort_key)
    }


def task_successes(
    results: Any, count_failures_as_zero: bool = False
) -> dict[str, tuple[int, int]]:
    """Task id -> (successes, simulations), tasks in :func:`task_sort_key` order."""
    return _in_task_order(_tallies(_simulations(results), count_failures_as_zero))


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
    tallies = _tallies(_simulations(results), count_failures_as_zero)
    return _intervals_of(tallies, _pass_hat_k_of(tallies, _num_trials(results)), bootstrap)


def _intervals_of(
    tallies: Mapping[str, Sequence[int]], estimates: Mapping[int, float], bootstrap: Bootstrap
) -> dict[int, Interval]:
    ordered = _in_task_order(tallies).values()
    return {
        k: bootstrap.interval([task_pass_hat_k(c, n, k) for c, n in ordered]) for k in estimates
    }


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean, ``None`` for no values."""
    return sum(values) / len(values) if values else None


def summarize(results: Any, count_failures_as_zero: bool = False) -> JSONObject:
    """The figures of a run: pass^k, mean reward, terminations, errors, steps, cost, tokens.

    ``infrastructure_errors`` counts the simulations that failed on every attempt (tau3);
    ``failures`` says the rule applied to them: ``"left out"`` of pass^k and the mean reward
    (default, as tau3) or ``"counted as 0"``. One pass over the simulations, holding none of
    them (a run's simulations may be read from its file as they come).
    """
    figures = RunFigures(count_failures_as_zero)
    for sim in _simulations(results):
        figures.add(sim)
    tallies = figures.tallies
    estimates = _pass_hat_k_of(tallies, _num_trials(results))
    successes = _in_task_order(tallies)
    cache = info_of(results).get("user_cache")
    count = figures.simulations
    return {
        "simulations": count,
        "tasks": len(tallies),
        "trials": max((n for _, n in tallies.values()), default=0),
        "pass_hat_k": estimates,
        "pass_hat_k_interval": {
            k: {"low": v.low, "high": v.high}
            for k, v in _intervals_of(tallies, estimates, DEFAULT_BOOTSTRAP).items()
        },
        "task_successes": {
            task: {"successes": c, "trials": n} for task, (c, n) in successes.items()
        },
        "disagreeing_tasks": [task for task, (c, n) in successes.items() if 0 < c < n],
        "breakdown": breakdown(_tasks(results), successes),
        "user_cache": dict(cache) if isinstance(cache, Mapping) else None,
        "successes": figures.successes,
        "mean_reward": figures.reward_sum / figures.rewards if figures.rewards else None,
        "terminations": dict(figures.terminations),
        "tool_errors_per_episode": figures.tool_errors / count if count else None,
        "steps_per_episode": figures.steps / count if count else None,
        "max_steps_seen": figures.max_steps,
        "agent_cost": figures.agent_cost,
        "agent_cost_per_episode": None
        if figures.agent_cost is None
        else figures.agent_cost / count,
        "user_cost": figures.user_cost,
        "agent_tokens": dict(figures.tokens) or None,
        "duration_per_episode": figures.duration_sum / figures.durations
        if figures.durations
        else None,
        "errors": figures.errors,
        "benchmark": info_of(results).get("benchmark", "tau2"),
        **_protocol(info_of(results)),
        "infrastructure_errors": figures.left_out,
        "judge_failures": figures.judge_failures,
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
