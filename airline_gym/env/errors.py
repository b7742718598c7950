"""The env's refusal of a call out of order, in Gymnasium's terms (``ResetNeeded``)."""

from __future__ import annotations

import gymnasium as gym

from airline_gym.errors import ConfigError

__all__ = ["ResetNeeded", "ended"]


class ResetNeeded(ConfigError, gym.error.ResetNeeded, RuntimeError):
    """``step()`` before ``reset()``, or after the episode ended: the caller's mistake (also a
    ``RuntimeError``, as before)."""


def ended(reason: str | None) -> ResetNeeded:
    """The error of a ``step()`` after the episode ended with ``reason``."""
    return ResetNeeded(
        f"Cannot call step() after the episode ended ({reason}); call reset() to start another"
    )
