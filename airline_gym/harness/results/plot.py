"""The pass^k curve as an image (needs matplotlib: ``pip install 'airline-gym[plot]'``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from airline_gym.errors import require

__all__ = ["plot_pass_hat_k"]


def plot_pass_hat_k(
    curves: Mapping[str, Mapping[int, float]], path: str | os.PathLike[str], title: str = ""
) -> Any:
    """Draw pass^k against k, one line per named curve, into an image file (needs matplotlib),
    and return the matplotlib ``Figure``. The k axis runs from 1/2 to the largest k + 1/2 with
    a tick at each whole k (one trial: one point, at k = 1, in the middle).

    Raises :class:`~airline_gym.errors.MissingDependencyError` (an ``ImportError``) naming the
    ``plot`` extra when matplotlib is missing.
    """
    figure_module = require("matplotlib.figure", "plot", "plotting")
    MaxNLocator = require("matplotlib.ticker", "plot", "plotting").MaxNLocator
    figure = figure_module.Figure(figsize=(6, 4), layout="constrained")
    axes = figure.add_subplot()
    for label, values in curves.items():
        ks = sorted(values)
        axes.plot(ks, [values[k] for k in ks], marker="o", label=label)
    axes.set_xlabel("k")
    axes.set_ylabel("pass^k")
    axes.set_ylim(0, 1.02)
    largest = max((k for values in curves.values() for k in values), default=1)
    axes.set_xlim(0.5, largest + 0.5)
    if largest <= 16:
        axes.set_xticks(range(1, largest + 1))
    else:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(alpha=0.3)
    if title:
        axes.set_title(title)
    if curves:
        axes.legend()
    figure.savefig(os.fspath(path), dpi=120)
    return figure
