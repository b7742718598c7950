"""Figures of a run: pass^k exactly as tau2-bench computes it, and summaries for people."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from airline_gym.harness.results.io import JSONObject, Results

__all__ = [
    "format_summary",
    "is_success",
    "pass_hat_k",
    "sim_reward",
    "summarize",
    "task_outcomes",
    "task_sort_key",
]

_AGENT = "assistant"


def is_success(reward: Any) -> bool:
    """tau2's success test: the reward is 1 (within 1e-6); a missing reward is a failure."""
    return isinstance(reward, int | float) and (1 - 1e-6) <= reward <= (1 + 1e-6)


def task_sort_key(task_id: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order, then the others alphabetically."""
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)


def _simulations(results: Results | Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[Any]:
    if isinstance(results, Results):
        return results.simulations
    if isinstance(results, Mapping):
        return list(results.get("simulations") or [])
    return list(results)


def _num_trials(results: Any) -> int | None:
    info = results.info if isinstance(results, Results) else None
    if isinstance(results, Mapping):
        info = results.get("info")
    value = info.get("num_trials") if isinstance(info, Mapping) else None
    return value if isinstance(value, int) and value > 0 else None


def sim_reward(sim: Mapping[str, Any]) -> float:
    """A simulation's recorded reward (0 when it has none)."""
    info = sim.get("reward_info")
    reward = info.get("reward") if isinstance(info, Mapping) else None
    return float(reward) if isinstance(reward, int | float) else 0.0


def task_outcomes(results: Any) -> dict[str, list[float]]:
    """Task id -> the rewards of its simulations, tasks in order of first appearance."""
    out: dict[str, list[float]] = {}
    for sim in _simulations(results):
        out.setdefault(str(sim["task_id"]), []).append(sim_reward(sim))
    return out


def pass_hat_k(results: Any) -> dict[int, float]:
    """pass^k for k = 1..K, exactly as tau2-bench's ``agent_metrics`` computes it.

    For a task with n simulations of which c succeeded (reward 1), pass^k = C(c, k) / C(n, k);
    the metric is the mean over tasks. K is ``info.num_trials`` (the largest trial count when the
    file has none), lowered to the smallest number of simulations of any task, so that every
    task has at least k trials. ``results`` is a :class:`Results`, its dict, or simulations.
    """
    outcomes = task_outcomes(results)
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


def summarize(results: Any) -> JSONObject:
    """The figures of a run: pass^k, mean reward, terminations, errors, steps, cost, tokens."""
    sims = _simulations(results)
    outcomes = task_outcomes(sims)
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
        if isinstance(info, Mapping) and info.get("error"):
            errors.append(f"task {sim['task_id']} trial {sim.get('trial')}: {info['error']}")
    agent_cost = _total(s.get("agent_cost") for s in sims)
    rewards = [sim_reward(s) for s in sims]
    return {
        "simulations": len(sims),
        "tasks": len(outcomes),
        "trials": max((len(r) for r in outcomes.values()), default=0),
        "pass_hat_k": pass_hat_k(results),
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
    }


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def format_summary(summary: Mapping[str, Any], max_errors_shown: int = 5) -> str:
    """A readable block of :func:`summarize` figures."""
    lines = [
        f"simulations: {summary['simulations']} ({summary['tasks']} tasks, "
        f"up to {summary['trials']} trial{'' if summary['trials'] == 1 else 's'} each)",
        "pass^k: "
        + (
            "  ".join(f"k={k}: {v:.3f}" for k, v in summary["pass_hat_k"].items())
            if summary["pass_hat_k"]
            else "-"
        ),
        f"mean reward: {_fmt(summary['mean_reward'])} "
        f"({summary['successes']}/{summary['simulations']} successes)",
        "terminations: "
        + ", ".join(f"{k} {v}" for k, v in sorted(summary["terminations"].items())),
        f"tool errors per episode: {_fmt(summary['tool_errors_per_episode'], '.2f')}",
        f"steps per episode: {_fmt(summary['steps_per_episode'], '.1f')} "
        f"(max {summary['max_steps_seen']})",
    ]
    if summary["agent_cost"] is not None:
        lines.append(
            f"agent cost: ${summary['agent_cost']:.4f} "
            f"(${summary['agent_cost_per_episode']:.4f} per episode)"
        )
    if summary["user_cost"] is not None:
        lines.append(f"user cost: ${summary['user_cost']:.4f}")
    if summary["agent_tokens"]:
        lines.append(
            "agent tokens: " + ", ".join(f"{k} {v}" for k, v in summary["agent_tokens"].items())
        )
    errors = summary["errors"]
    for error in errors[:max_errors_shown]:
        lines.append(f"error: {error}")
    if len(errors) > max_errors_shown:
        lines.append(f"... and {len(errors) - max_errors_shown} more errors")
    return "\n".join(lines)
