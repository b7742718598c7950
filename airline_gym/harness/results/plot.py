"""The pass^k curve as an image (needs matplotlib: ``pip install 'airline-gym[plot]'``)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from airline_gym.errors import require

__all__ = ["plot_pass_hat_k"]


def plot_pass_hat_k(
    curves: Mapping[str, Mapping[int, float]], path: str | os.PathLike[str], title: str = ""
) -> None:
    """Draw pass^k against k, one line per named curve, into an image file (needs matplotlib).

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
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(alpha=0.3)
    if title:
        axes.set_title(title)
    if curves:
        axes.legend()
    figure.savefig(os.fspath(path), dpi=120)
