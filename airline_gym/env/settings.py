"""The env's arguments checked before anything is built, and the DB file of a user data folder."""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

from airline_gym.errors import ConfigError

__all__ = ["check_settings", "db_path"]


def check_settings(max_steps: Any, max_errors: Any, error_penalty: Any) -> None:
    """Refuse limits that are not whole numbers >= 1 and penalties that are not finite >= 0."""
    for name, value in (("max_steps", max_steps), ("max_errors", max_errors)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ConfigError(f"{name} must be a whole number >= 1; got {value!r}")
    if (
        isinstance(error_penalty, bool)
        or not isinstance(error_penalty, numbers.Real)
        or not math.isfinite(error_penalty)
        or error_penalty < 0
    ):
        raise ConfigError(f"error_penalty must be a finite number >= 0; got {error_penalty!r}")


def db_path(data_dir: str | os.PathLike[str]) -> str:
    from airline_gym.data import data_files

    return str(data_files(data_dir).db)
