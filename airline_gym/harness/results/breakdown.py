"""Pass rates by what the tasks ask for: kind, outcome, bin and DB effect, each with its interval.

Generated tasks carry labels (``airline_gym.kinds``, ``outcomes``, ``bins``, ``changes_db``: see
``docs/training-tasks.md``); a results file embeds its tasks. :func:`breakdown` groups a run's
tasks by each label and gives every group its pass^1 (the mean over its tasks of successes /
trials) with a percentile-bootstrap interval over the group's tasks (the same seeded bootstrap as
pass^k's), its task and simulation counts and its successes. A task counts once in every group
whose label it has (a cancel-and-rebook task is in ``cancel`` and in ``book``). Tasks without
labels (the benchmark's 50) give no breakdown.

>>> tasks = [{"id": "a", "airline_gym": {"kinds": ["cancel"], "outcomes": ["refused"],
...           "bins": ["cancel/refused"], "changes_db": False}}]
>>> breakdown(tasks, {"a": (1, 2)})["kind"]["cancel"]["pass_hat_1"]
0.5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from airline_gym.harness.results.intervals import DEFAULT_BOOTSTRAP, Bootstrap
from airline_gym.harness.results.io import JSONObject

__all__ = ["DIMENSIONS", "breakdown", "compare_breakdowns", "format_breakdown", "task_labels"]

#: The dimensions, in the order they are shown, each with the task key its labels come from.
DIMENSIONS: dict[str, str] = {
    "kind": "kinds",
    "outcome": "outcomes",
    "bin": "bins",
    "db": "changes_db",
}


def task_labels(task: Mapping[str, Any]) -> dict[str, list[str]]:
    """A task's labels by dimension (empty when it carries none)."""
    own = task.get("airline_gym") if isinstance(task, Mapping) else None
    if not isinstance(own, Mapping):
        return {}
    labels: dict[str, list[str]] = {}
    for dimension, key in DIMENSIONS.items():
        value = own.get(key)
        if isinstance(value, bool):
            labels[dimension] = ["changes" if value else "unchanged"]
        elif isinstance(value, list):
            labels[dimension] = sorted({str(v) for v in value if isinstance(v, str)})
    return labels


def breakdown(
    tasks: Iterable[Mapping[str, Any]],
    tallies: Mapping[str, tuple[int, int]],
    *,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> dict[str, dict[str, JSONObject]]:
    """Dimension -> label -> ``{"tasks", "simulations", "successes", "pass_hat_1", "low",
    "high"}``, labels sorted by name; ``{}`` when no simulated task carries labels.

    ``tallies``: task id -> (successes, simulations) of the run
    (:func:`~airline_gym.harness.results.metrics.task_successes`)."""
    groups: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for task in tasks:
        tally = tallies.get(str(task.get("id")))
        if tally is None:
            continue
        for dimension, labels in task_labels(task).items():
            for label in labels:
                groups.setdefault(dimension, {}).setdefault(label, []).append(tally)
    out: dict[str, dict[str, JSONObject]] = {}
    for dimension in DIMENSIONS:
        for label in sorted(groups.get(dimension, {})):
            counts = groups[dimension][label]
            interval = bootstrap.interval([c / n for c, n in counts])
            out.setdefault(dimension, {})[label] = {
                "tasks": len(counts),
                "simulations": sum(n for _, n in counts),
                "successes": sum(c for c, _ in counts),
                "pass_hat_1": interval.estimate,
                "low": interval.low,
                "high": interval.high,
            }
    return out


def format_breakdown(groups: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """The terminal table: one line per label, under a heading per dimension."""
    if not groups:
        return []
    width = max(len(label) for labels in groups.values() for label in labels)
    lines = ["pass^1 by what the tasks ask (95% interval over tasks; a task counts in each of its)"]
    for dimension, labels in groups.items():
        lines.append(f"  by {dimension}:")
        for label, row in labels.items():
            lines.append(
                f"    {label:<{width}}  {row['pass_hat_1']:.3f} [{row['low']:.3f}, "
                f"{row['high']:.3f}]  {row['successes']}/{row['simulations']} simulations, "
                f"{row['tasks']} tasks"
            )
    return lines


def compare_breakdowns(
    a: Mapping[str, Mapping[str, Mapping[str, Any]]],
    b: Mapping[str, Mapping[str, Mapping[str, Any]]],
) -> list[str]:
    """``compare``'s lines: each label's pass^1 in A and in B, with their intervals and B - A."""
    lines: list[str] = []
    for dimension in DIMENSIONS:
        labels = sorted(set(a.get(dimension, {})) | set(b.get(dimension, {})))
        if not labels:
            continue
        if not lines:
            lines.append("pass^1 by what the tasks ask (95% interval over each run's tasks):")
        lines.append(f"  by {dimension}:")
        width = max(len(label) for label in labels)
        for label in labels:
            row_a, row_b = a.get(dimension, {}).get(label), b.get(dimension, {}).get(label)
            delta = (
                f"B - A {row_b['pass_hat_1'] - row_a['pass_hat_1']:+.3f}"
                if row_a and row_b
                else "only in one run"
            )
            lines.append(f"    {label:<{width}}  A {_cell(row_a)}  B {_cell(row_b)}  {delta}")
    return lines


def _cell(row: Mapping[str, Any] | None) -> str:
    if not row:
        return "-" + " " * 20
    return f"{row['pass_hat_1']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
