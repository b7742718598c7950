"""Check tool-call arguments against the tools' typed signatures.

The reference calls its tool methods with whatever the model sent, so ill-typed calls surface as
Python ``TypeError``/``KeyError`` texts or corrupt records. We check the arguments first and
answer with an error naming the tool, the argument, what was expected and what came; see
docs/deviations.md. Well-typed calls pass through unchanged.
"""

from __future__ import annotations

import math
import reprlib
import typing
from functools import cache
from typing import Any, Literal, get_args, get_origin, is_typeddict

from airline_gym.domain.schemas import parameters
from airline_gym.domain.tools import ToolFunction
from airline_gym.errors import ActionError


@cache
def _fields(typed_dict: Any) -> dict[str, Any]:
    return typing.get_type_hints(typed_dict)


class ArgumentError(ActionError):
    """Arguments that do not fit the tool's schema; the message is shown to the agent."""


#: Integers longer than this (in bits) are described by their size, never converted to text.
_SHOWN_INT_BITS = 256


def digits(value: int) -> int:
    """About how many decimal digits ``value`` has, without converting it to text."""
    return max(1, math.floor((abs(value).bit_length() - 1) * math.log10(2)) + 1)


class _Repr(reprlib.Repr):
    """reprlib with huge ints described by size (``str()`` of one raises past 4,300 digits)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > _SHOWN_INT_BITS:
            return f"<a {digits(x)}-digit number>"
        return super().repr_int(x, level)


_REPR = _Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 50, 50, 4, 4


def short_repr(value: Any, width: int = 60) -> str:
    """A bounded repr: safe for huge, deeply nested or unprintable values."""
    try:
        text = _REPR.repr(value)
    except Exception:  # a value whose repr fails: describe its type only
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[: width - 3] + "..."


def _fits_float(value: int) -> bool:
    """Whether an int converts to a float, as the reference's models need for amounts."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def json_type(value: Any) -> str:
    """The JSON name of ``value``'s type (``null``, ``boolean``, ``number``, ``string``, ``array``,
    ``object``; else the Python type's name), for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def described(value: Any) -> str:
    """``value`` in an error message: its JSON type and a bounded repr (``string 'DB'``)."""
    return f"{json_type(value)} {short_repr(value)}"


def describe(annotation: Any) -> str:
    """A short human description of an expected type."""
    if annotation is str:
        return "a string"
    if annotation is int:
        return "a whole number"
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(repr(v) for v in get_args(annotation))
    if get_origin(annotation) is list:
        item = get_args(annotation)[0]
        if is_typeddict(item):
            return "an array of objects with " + ", ".join(_fields(item))
        return "an array"
    return getattr(annotation, "__name__", str(annotation))


def _check(value: Any, annotation: Any, where: str) -> str | None:
    """None if ``value`` fits ``annotation``, else a reason naming ``where``."""
    if annotation is str:
        ok = isinstance(value, str)
    elif annotation is int and type(value) is int and not _fits_float(value):
        # The reference's pydantic models refuse these ("Input should be a valid number"), and
        # our arithmetic on them would overflow: refuse before running, naming the size.
        return f"'{where}' is too large: got a number of about {digits(value)} digits"
    elif annotation is int:
        # JSON Schema counts 2.0 as an integer; like the reference (pydantic), floats must also
        # fit a 64-bit integer.
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float)
            and math.isfinite(value)
            and value.is_integer()
            and -(2**63) <= value < 2**63
        )
    elif get_origin(annotation) is Literal:
        ok = isinstance(value, str) and value in get_args(annotation)
    elif get_origin(annotation) is list:
        if not isinstance(value, list):
            expected = describe(annotation)
            return f"'{where}' must be {expected}; got {described(value)}"
        item = get_args(annotation)[0]
        for i, element in enumerate(value):
            reason = _check(element, item, f"{where}[{i}]")
            if reason:
                return reason
        return None
    elif is_typeddict(annotation):
        if not isinstance(value, dict):
            fields = ", ".join(_fields(annotation))
            got = f"{described(value)}"
            return f"'{where}' must be an object with {fields}; got {got}"
        for key, hint in _fields(annotation).items():
            if key not in value:
                return f"'{where}' is missing the field '{key}' ({describe(hint)})"
            reason = _check(value[key], hint, f"{where}.{key}")
            if reason:
                return reason
        return None
    else:  # pragma: no cover - every tool annotation is handled above
        raise TypeError(f"unsupported annotation {annotation!r}")
    if ok:
        return None
    return f"'{where}' must be {describe(annotation)}; got {described(value)}"


def validate_arguments(name: str, func: ToolFunction, arguments: Any) -> dict[str, Any]:
    """Return the arguments unchanged if they fit, else raise :class:`ArgumentError`."""
    params = parameters(func)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ArgumentError(
            f"invalid arguments for {name}: expected a JSON object of named arguments; "
            f"got {described(arguments)}"
        )
    missing = [p for p in params if p not in arguments]
    if missing:
        wanted = "; ".join(f"'{p}' ({describe(params[p])})" for p in missing)
        raise ArgumentError(f"invalid arguments for {name}: missing required argument {wanted}")
    extra = [a for a in arguments if a not in params]
    if extra:
        allowed = ", ".join(params) or "none"
        shown = ", ".join(short_repr(a, 40) for a in extra[:5])
        raise ArgumentError(
            f"invalid arguments for {name}: unexpected argument {shown}; it takes: {allowed}"
        )
    for param, annotation in params.items():
        reason = _check(arguments[param], annotation, param)
        if reason:
            raise ArgumentError(f"invalid arguments for {name}: {reason}")
    return arguments
