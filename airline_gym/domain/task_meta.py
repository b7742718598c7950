"""The ``airline_gym`` key of a task record: what ``generate`` writes beside tau2's fields, checked
once, when the task set loads.

:data:`FIELDS` holds, for each field this package reads, the check of its value: a function
returning what is wrong with it, or None. A field may be absent or null (each reader has a
default); a key not in the table is left alone, so another tool (or a newer airline-gym) may
add its own. To read a new field, add its check here: every reader (``tasks --kind`` and
``--distribution``, ``audit``, the splits, the intent customer, the gold dialogue) can then
trust its type. A value that fails is one ``ConfigError`` naming the task and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from airline_gym.domain.intents import Intent
from airline_gym.domain.validation import described, json_type
from airline_gym.errors import ConfigError

__all__ = ["FIELDS", "STRICT_CHECK_NAMES", "Check", "check_meta"]

#: What is wrong with a field's value (None: nothing).
Check = Callable[[Any], str | None]
#: The strict checks a generated task may list in ``checks`` (see
#: :mod:`airline_gym.domain.strict_grading`), in the order they are reported.
STRICT_CHECK_NAMES: tuple[str, ...] = ("WRITES", "CONFIRMED", "SETTLED", "ANSWERED")


def _strings(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    return f"must be a list of strings, not {described(value)}"


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else f"must be a string, not {described(value)}"


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false, not {described(value)}"


def _whole(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    return f"must be a whole number, not {described(value)}"


def _count_or_dash(value: Any) -> str | None:
    if value == "-" or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return None
    return f'must be a whole number >= 0 or "-", not {described(value)}'


def _check_names(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        return f"must be a list of check names, not {described(value)}"
    unknown = [c for c in value if c not in STRICT_CHECK_NAMES]
    if unknown:
        return f"has unknown check {unknown[0]!r:.40} (known: {', '.join(STRICT_CHECK_NAMES)})"
    return None


def _intent(value: Any) -> str | None:
    try:
        Intent.from_json(value)
    except ValueError as exc:
        return f"is not an intent: {exc}"
    return None


#: Field -> its check. Absent or null fields are not checked; unknown fields are kept as they are.
FIELDS: dict[str, Check] = {
    "kinds": _strings,
    "outcomes": _strings,
    "bins": _strings,
    "changes_db": _boolean,
    "grading": _string,
    "seed": _whole,
    "split": _string,
    "tier": _string,
    "cabin": _string,
    "passengers": _count_or_dash,
    "payment_methods": _strings,
    "traits": _strings,  # taskgen.traits.TRAITS (a newer airline-gym may add names)
    "intent": _intent,
    "checks": _check_names,  # read by grading too: check_task checks it for regrade
}


def check_meta(raw: Mapping[str, Any], where: str) -> None:
    """Raise a one-line ``ConfigError`` (``where``: the task) when ``raw["airline_gym"]`` is not
    an object or a field :data:`FIELDS` knows has a value of the wrong type."""
    meta = raw.get("airline_gym")
    if meta is None:
        return
    if not isinstance(meta, dict):
        raise ConfigError(f"{where}: 'airline_gym' must be an object, not {json_type(meta)}")
    for name, check in FIELDS.items():
        value = meta.get(name)
        problem = None if value is None else check(value)
        if problem is not None:
            raise ConfigError(f"{where}: 'airline_gym.{name}' {problem}"[:600])
