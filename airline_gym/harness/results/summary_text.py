"""The terminal summary of a run (``eval``, ``regrade``): :func:`format_summary` of
:func:`~airline_gym.harness.results.metrics.summarize`'s figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.harness.results.breakdown import format_breakdown

__all__ = ["PER_TASK_SHOWN", "format_summary"]

#: Up to this many tasks, the summary lists each task's successes (all of them: --json, report).
PER_TASK_SHOWN = 60


def _left_out(summary: Mapping[str, Any]) -> int:
    """How many simulations the mean reward left out (the uncounted infrastructure errors)."""
    left_out = summary.get("failures") == "left out"
    return int(summary.get("infrastructure_errors", 0)) if left_out else 0


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _wrapped(head: str, items: Sequence[str], width: int = 100, sep: str = " ") -> list[str]:
    """``head`` then ``items`` separated by ``sep``, wrapped at ``width`` with an indent."""
    lines, line, first = [], head, True
    for item in items:
        gap = " " if first else sep
        if len(line) + len(gap) + len(item) > width and line.strip():
            lines.append(line)
            line, gap = "   ", " "
        line += gap + item
        first = False
    return [*lines, line]


def _noise_lines(summary: Mapping[str, Any]) -> list[str]:
    """The pass^k intervals, per-task tallies and the tasks whose trials disagree."""
    intervals = summary.get("pass_hat_k_interval") or {}
    if not intervals:
        return []
    tallies = summary.get("task_successes") or {}
    disagree = summary.get("disagreeing_tasks") or []
    lines = _wrapped(
        "95% interval (bootstrap over tasks):",
        [f"k={k}: [{v['low']:.3f}, {v['high']:.3f}]" for k, v in intervals.items()],
        sep="  ",
    )
    if len(tallies) <= PER_TASK_SHOWN:
        lines += _wrapped(
            "successes per task:",
            [f"{task}:{t['successes']}/{t['trials']}" for task, t in tallies.items()],
        )
    else:
        lines.append(
            f"successes per task: {len(tallies)} tasks (each in --json and the HTML report)"
        )
    if summary.get("trials", 0) > 1:
        shown = disagree if len(disagree) <= PER_TASK_SHOWN else []
        more = ["(listed in --json and the HTML report)"] if len(disagree) > PER_TASK_SHOWN else []
        lines += _wrapped(f"trials disagree on {len(disagree)} task(s):", shown + more or ["-"])
    return lines


def format_summary(summary: Mapping[str, Any], max_errors_shown: int = 5) -> str:
    """A readable block of :func:`summarize` figures."""
    lines = [
        f"simulations: {summary['simulations']} ({summary['tasks']} tasks, "
        f"up to {summary['trials']} trial{'' if summary['trials'] == 1 else 's'} each)",
        *_wrapped(
            "pass^k:",
            [f"k={k}: {v:.3f}" for k, v in summary["pass_hat_k"].items()] or ["-"],
            sep="  ",
        ),
        *_noise_lines(summary),
        *format_breakdown(summary.get("breakdown") or {}),
        f"mean reward: {_fmt(summary['mean_reward'])} "
        f"({summary['successes']}/{summary['simulations'] - _left_out(summary)} successes)",
        "terminations: "
        + ", ".join(f"{k} {v}" for k, v in sorted(summary["terminations"].items())),
        f"tool errors per episode: {_fmt(summary['tool_errors_per_episode'], '.2f')}",
        f"steps per episode: {_fmt(summary['steps_per_episode'], '.1f')} "
        f"(max {summary['max_steps_seen']})",
    ]
    if "protocol" in summary:
        lines.append(
            f"protocol: {summary['protocol']} "
            + (
                "(comparable with the leaderboard)"
                if summary.get("leaderboard_comparable")
                else "(not comparable with the leaderboard: only --protocol leaderboard is)"
            )
        )
    judge_failures = summary.get("judge_failures", 0)
    if judge_failures:
        lines.append(
            f"NL judge failures: {judge_failures} simulation(s) have no verdict (the judge "
            "failed; their reward 0 is not a grade: see reward_info.info.nl.error)"
        )
    failed = summary.get("infrastructure_errors", 0)
    if failed or summary.get("benchmark") == "tau3":
        rule = summary.get("failures", "left out")
        lines.append(
            f"infrastructure errors: {failed} ({rule}"
            + (" of pass^k and the mean reward" if rule == "left out" else " in both")
            + ", as tau3's leaderboard "
            + ("does)" if rule == "left out" else "entries marked 'treated as failures' do)")
        )
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
    cache = summary.get("user_cache")
    if cache:
        lines.append(f"user cache: {cache.get('hits')} hits, {cache.get('misses')} misses")
    errors = summary["errors"]
    for error in errors[:max_errors_shown]:
        lines.append(f"error: {error}")
    if len(errors) > max_errors_shown:
        lines.append(f"... and {len(errors) - max_errors_shown} more errors")
    return "\n".join(lines)
