"""The one check of numbers a user gives: finite real numbers, nothing else (stdlib only).

Python reads ``nan``, ``inf`` and ``1e999`` as floats and JSON's ``NaN`` and ``Infinity`` as
floats too; sent on, they make every reward NaN, reach a server as ``NaN`` (not JSON), or
overflow a timer. Settings are checked here when they are made, so such a value is refused in
one line naming it, before anything runs.

>>> finite_number("scale", 0.5, minimum=0)
0.5
>>> finite_number("scale", float("nan"))
Traceback (most recent call last):
...
airline_gym.errors.ConfigError: scale must be a finite number; got nan
>>> non_finite({"top_p": 0.9, "extra": {"penalties": [0.1, float("inf")]}})
"extra['penalties'][1] is inf"
>>> whole_number("64"), whole_number("\u00b2"), whole_number("9" * 5000)
(64, None, None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real
from typing import Any

from airline_gym.errors import ConfigError

__all__ = ["check_finite", "finite_number", "non_finite", "whole_number"]

#: How deep :func:`non_finite` looks into nested settings (deeper ones are refused as such).
MAX_DEPTH = 32


def finite_number(name: str, value: Any, *, minimum: float | None = None) -> float:
    """``value`` as a float when it is a finite real number (>= ``minimum``), else ConfigError.

    Strings, complex numbers, booleans, NaN and infinities are refused, naming ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ConfigError(f"{name} must be a finite number; got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ConfigError(f"{name} must be a finite number; got {value!r}")
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name} must be a finite number >= {minimum:g}; got {value!r}")
    return number


def whole_number(text: str, max_digits: int = 18) -> int | None:
    """``text`` as an int when it is 1 to ``max_digits`` ASCII digits, else None.

    ``str.isdigit`` alone is not enough: it accepts ``"\u00b2"`` (superscript two), which
    ``int`` refuses, and ``int`` refuses more than 4,300 digits; both would be a traceback.
    """
    if not (0 < len(text) <= max_digits and text.isascii() and text.isdigit()):
        return None
    return int(text)


def non_finite(value: Any, path: str = "", depth: int = 0) -> str | None:
    """Where in ``value`` (nested dicts, lists and tuples) a NaN or infinity is, or None."""
    if isinstance(value, float | complex) and not math.isfinite(abs(value)):
        return f"{path or 'the value'} is {value!r}"
    if depth >= MAX_DEPTH and isinstance(value, Mapping | list | tuple):
        return f"{path or 'the value'} is nested more than {MAX_DEPTH} deep"
    if isinstance(value, Mapping):
        items: Any = ((f"{path}[{k!r}]" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for where, item in items:
        found = non_finite(item, where, depth + 1)
        if found:
            return found
    return None


def check_finite(what: str, settings: Mapping[str, Any] | None) -> None:
    """Refuse ``settings`` (e.g. an LLM's arguments) holding a NaN or an infinity anywhere."""
    found = non_finite(dict(settings or {}))
    if found:
        raise ConfigError(f"{what}: {found}; settings must be finite numbers")
