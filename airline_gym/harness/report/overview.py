"""A run's overview: who ran what, pass^k as an SVG's geometry, the task x trial grid, figures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.harness.results.io import JSONObject, Results
from airline_gym.harness.results.metrics import summarize, task_sort_key

__all__ = ["PassHatKCurve", "describe_run", "pass_hat_k_curve", "run_overview", "task_grid"]

_NOT_RECORDED = "not recorded"


def _who(info: Any) -> str:
    """A model (and implementation) from tau2's ``agent_info``/``user_info``."""
    if not isinstance(info, Mapping):
        return _NOT_RECORDED
    llm, impl = info.get("llm"), info.get("implementation")
    if llm and impl:
        return f"{llm} ({impl})"
    return str(llm or impl or _NOT_RECORDED)


def _task_set(results: Results) -> str:
    info = results.info
    name = info.get("task_set")
    benchmark = info.get("benchmark")
    text = str(name) if name else ("embedded in the file" if results.tasks else "tau2 (default)")
    if benchmark and str(benchmark) not in text:
        text = f"{benchmark}: {text}"
    ids = info.get("task_ids")
    if isinstance(ids, list):
        text += f", {len(ids)} tasks"
    elif results.tasks:
        text += f", {len(results.tasks)} tasks"
    return text


def _reward_basis(results: Results) -> str:
    basis = results.info.get("reward_basis")
    if isinstance(basis, list) and basis:
        return " x ".join(str(b) for b in basis)
    seen: Counter[str] = Counter()
    for sim in results.simulations:
        recorded = (sim.get("reward_info") or {}).get("reward_basis")
        if isinstance(recorded, list) and recorded:
            seen[" x ".join(str(b) for b in recorded)] += 1
    if not seen:
        return "each task's own"
    return "each task's own: " + ", ".join(
        f"{b} ({n} simulation{'' if n == 1 else 's'})" for b, n in seen.most_common()
    )


def describe_run(results: Results) -> list[tuple[str, str]]:
    """(label, value) rows: agent, customer, protocol, reward basis, task set and the rest."""
    info = results.info
    protocol = info.get("protocol")
    if protocol:
        comparable = info.get("leaderboard_comparable", protocol == "leaderboard") is True
        protocol = f"{protocol} ({'' if comparable else 'not '}comparable with the leaderboard)"
    rows = [
        ("agent", _who(info.get("agent_info"))),
        ("customer", _who(info.get("user_info"))),
        ("protocol", str(protocol) if protocol else _NOT_RECORDED),
        ("reward basis", _reward_basis(results)),
        ("task set", _task_set(results)),
        ("trials", str(info.get("num_trials", _NOT_RECORDED))),
        ("seed", str(info.get("seed", _NOT_RECORDED))),
        (
            "limits",
            f"max_steps {info.get('max_steps', '-')}, max_errors {info.get('max_errors', '-')}",
        ),
        ("written", results.timestamp),
    ]
    cache = info.get("user_cache")
    if isinstance(cache, Mapping):
        rows.append(
            ("customer reply cache", f"{cache.get('hits')} hits, {cache.get('misses')} misses")
        )
    return rows


class PassHatKCurve:
    """Geometry of the pass^k plot: one polyline per run, optional interval bars, axis ticks."""

    WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 420, 220, 44, 16, 12, 34

    def __init__(self, series: Sequence[tuple[str, Mapping[int, float], Mapping[int, Any]]]):
        ks = sorted({k for _, values, _ in series for k in values})
        self.max_k = max(ks, default=1)
        self.x_ticks = [(k, self.x(k)) for k in ks]
        self.y_ticks = [(f"{v:g}", self.y(v)) for v in (0.0, 0.25, 0.5, 0.75, 1.0)]
        self.series = []
        for label, values, intervals in series:
            points = [(k, v, self.x(k), self.y(v)) for k, v in sorted(values.items())]
            bars = []
            for k, bounds in sorted(intervals.items()):
                low, high = bounds
                bars.append((self.x(k), self.y(low), self.y(high), low, high, k))
            self.series.append(
                {
                    "label": label,
                    "points": points,
                    "polyline": " ".join(f"{x:.1f},{y:.1f}" for _, _, x, y in points),
                    "bars": bars,
                }
            )

    def x(self, k: int) -> float:
        span = self.WIDTH - self.LEFT - self.RIGHT
        return self.LEFT + (span / 2 if self.max_k == 1 else span * (k - 1) / (self.max_k - 1))

    def y(self, value: float) -> float:
        return self.TOP + (self.HEIGHT - self.TOP - self.BOTTOM) * (1 - value)


def pass_hat_k_curve(
    series: Sequence[tuple[str, Mapping[int, float], Mapping[int, Any]]],
) -> PassHatKCurve:
    """The plot of each (label, pass^k by k, (low, high) interval by k) series."""
    return PassHatKCurve(series)


def task_grid(results: Results) -> list[tuple[str, list[tuple[int, bool | None]]]]:
    """Per task (numeric order), per trial number any task has: success, failure or ``None``
    (not run)."""
    outcome: dict[str, dict[int, bool]] = {}
    for sim in results.simulations:
        reward = (sim.get("reward_info") or {}).get("reward")
        trial = sim.get("trial")
        trial = trial if isinstance(trial, int) else 0
        ok = isinstance(reward, int | float) and abs(reward - 1) <= 1e-6
        outcome.setdefault(str(sim["task_id"]), {})[trial] = ok
    # the trial numbers a file holds, not 0..max: a file's numbers never size the page
    trials = sorted({t for by in outcome.values() for t in by})
    return [
        (task, [(t, outcome[task].get(t)) for t in trials])
        for task in sorted(outcome, key=task_sort_key)
    ]


def run_overview(label: str, results: Results) -> JSONObject:
    """Everything the overview of one run shows (pass^k with its 95% bootstrap interval)."""
    summary = summarize(results)
    intervals = {
        k: (v["low"], v["high"]) for k, v in (summary.get("pass_hat_k_interval") or {}).items()
    }
    errors: Counter[int] = Counter()
    flags: Counter[str] = Counter()
    customer_tokens: Counter[str] = Counter()
    for sim in results.simulations:
        for message in sim.get("messages") or []:
            usage = message.get("usage") if message.get("role") == "user" else None
            for key, value in (usage if isinstance(usage, Mapping) else {}).items():
                if key in ("prompt_tokens", "completion_tokens") and isinstance(value, int):
                    customer_tokens[key] += value
        errors[
            sum(1 for m in sim.get("messages") or [] if m.get("role") == "tool" and m.get("error"))
        ] += 1
        for flag in sim.get("user_audit") or []:
            if isinstance(flag, Mapping):
                flags[str(flag.get("kind"))] += 1
    return {
        "label": label,
        "rows": describe_run(results),
        "summary": summary,
        "intervals": intervals,
        "grid": task_grid(results),
        "tool_error_counts": sorted(errors.items()),
        "audit_flags": flags.most_common(),
        "customer_tokens": dict(customer_tokens),
    }
