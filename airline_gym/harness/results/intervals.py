"""Bootstrap intervals over tasks, the primitive under pass^k's interval and compare's verdict.

A percentile bootstrap: the per-task values are drawn with replacement (``resamples`` times, from
a generator seeded with ``seed``, so the same values always give the same interval) and the
interval holds the middle ``level`` of the resampled means. Callers pass one value per task:
:func:`~airline_gym.harness.results.metrics.pass_hat_k_intervals` a task's pass^k,
:func:`~airline_gym.harness.results.compare.paired_difference` B's minus A's on one task.

>>> bootstrap_interval([1.0, 0.0, 1.0, 1.0])
Interval(estimate=0.75, low=0.25, high=1.0)
>>> verdict(Interval(0.1, 0.02, 0.2)), verdict(Interval(0.0, -0.1, 0.1))
('B is better', 'within noise')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from airline_gym.harness.results.io import JSONObject

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "Bootstrap",
    "Interval",
    "bootstrap_interval",
    "task_pass_hat_k",
    "verdict",
]

#: Resamples of the bootstrap (2,000: between seeds, an end moves by one task's weight at most,
#: 0.02 on 50 tasks, measured on the shared real runs).
DEFAULT_RESAMPLES = 2000
#: The bootstrap's seed: the same results file always gives the same interval.
DEFAULT_SEED = 0
#: The share of the resampled means an interval holds.
DEFAULT_LEVEL = 0.95
_MAX_DRAWS_PER_CHUNK = 1_000_000  # bounds memory on huge task sets


@dataclass(frozen=True)
class Interval:
    """An estimate with its bootstrap interval ``[low, high]``."""

    estimate: float
    low: float
    high: float

    def to_dict(self) -> JSONObject:
        """JSON-ready data."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def task_pass_hat_k(successes: int, trials: int, k: int) -> float:
    """One task's pass^k: the chance that k trials drawn without replacement all succeeded."""
    return math.comb(successes, k) / math.comb(trials, k)


def bootstrap_interval(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """The mean of ``values`` with its percentile-bootstrap interval (seeded, deterministic)."""
    if not values:
        raise ValueError("no values to resample")
    if resamples < 1 or not 0 < level < 1:
        raise ValueError("need resamples >= 1 and 0 < level < 1")
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    rows = max(1, _MAX_DRAWS_PER_CHUNK // len(data))
    means = []
    for start in range(0, resamples, rows):
        draws = rng.integers(0, len(data), size=(min(rows, resamples - start), len(data)))
        means.append(data[draws].mean(axis=1))
    tail = (1 - level) / 2
    low, high = np.quantile(np.concatenate(means), [tail, 1 - tail])
    return Interval(float(data.mean()), float(low), float(high))


@dataclass(frozen=True)
class Bootstrap:
    """How an interval over tasks is drawn (pass^k's and compare's alike)."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL

    def interval(self, values: Sequence[float]) -> Interval:
        """:func:`bootstrap_interval` of one value per task, with these settings."""
        return bootstrap_interval(
            values, resamples=self.resamples, seed=self.seed, level=self.level
        )


#: The settings every figure of the package uses unless told otherwise.
DEFAULT_BOOTSTRAP = Bootstrap()


def verdict(difference: Interval) -> str:
    """``B is better`` or ``A is better`` when the interval of B - A excludes 0, else
    ``within noise``."""
    if difference.low > 0:
        return "B is better"
    if difference.high < 0:
        return "A is better"
    return "within noise"
