"""Plain JSON into frozen dataclasses, each field checked against its type annotation.

:func:`build` reads what a file holds (objects, lists, strings, numbers, booleans, null) into the
dataclass ``cls``: an object with no key but the fields, each value of its field's type
(``str``, ``bool``, ``int``, ``X | None``, ``Literal[...]``, ``tuple[X, ...]`` from a list,
``Mapping[str, str]``, a nested dataclass), every whole number at least ``0``. Anything else is a
one-line ``ValueError`` naming the field's path (``requests[0].passenger_index``), so a value of
the wrong type never reaches the code that reads it. Pure.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Point:
...     x: int
...     label: str | None = None
>>> build(Point, {"x": 3})
Point(x=3, label=None)
>>> build(Point, {"x": 1.5})
Traceback (most recent call last):
...
ValueError: x must be a whole number >= 0, not number 1.5
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from airline_gym.domain.validation import described

__all__ = ["build"]


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _read(hint: Any, value: Any, path: str) -> Any:
    """``value`` as ``hint`` says, or ``ValueError`` naming ``path``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _read(inner, value, path)
    if origin is typing.Literal:
        if value not in args or isinstance(value, bool):
            shown = ", ".join(map(repr, args))
            raise ValueError(f"{path} must be one of {shown}, not {described(value)}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{path} must be a list, not {described(value)}")
        return tuple(_read(args[0], item, f"{path}[{i}]") for i, item in enumerate(value))
    if origin is Mapping:
        ok = isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
        if not ok:
            raise ValueError(f"{path} must be an object of strings, not {described(value)}")
        return dict(value)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, value, path)
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{path} must be true or false, not {described(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{path} must be a whole number >= 0, not {described(value)}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{path} must be a string, not {described(value)}")
        return value
    raise TypeError(f"{path}: no JSON reading for {hint!r}")  # a field type added: teach it


def build(cls: type, data: Any, path: str = "") -> Any:
    """``cls`` built from the JSON object ``data`` (see the module docstring)."""
    where = path or cls.__name__
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be an object, not {described(data)}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    extra = sorted(str(k)[:40] for k in data if k not in names)
    if extra:
        raise ValueError(f"{where} has unknown keys {', '.join(extra)}")
    hints = _hints(cls)
    values = {}
    for name, field in names.items():
        inner = f"{path}.{name}" if path else name
        if name in data:
            values[name] = _read(hints[name], data[name], inner)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ValueError(f"{inner} is missing")
    try:
        return cls(**values)
    except ValueError as exc:  # the class's own checks (__post_init__)
        raise ValueError(f"{where}: {exc}") from None
