"""Intents kept as data: a JSON list of records, each an intent's fields plus its ``task`` id.

A record holds the fields of :class:`~airline_gym.domain.intents.Intent` in its JSON form
(:meth:`Intent.to_json`), defaults left out. Loading checks every field against the dataclasses'
type hints and every request against its kind's rules, and refuses a bad record in one line that
names the record and the field:

>>> load_intent_records('[{"task": "3", "user_id": "u", "name": "N", "requests": '
...                     '[{"kind": "cancel", "insist": "twice"}]}]', "x.json")
Traceback (most recent call last):
...
ValueError: x.json: record 0 (task 3): requests[0].insist: expected int, got str
>>> found = load_intent_records('[{"task": "3", "user_id": "u", "name": "N", "requests": []}]', "x")
>>> found["3"].name
'N'
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from airline_gym.domain.intents import Intent

__all__ = ["load_intent_records"]


def load_intent_records(text: str, source: str) -> dict[str, Intent]:
    """Task id -> intent, from the JSON ``text`` of ``source`` (named in errors)."""
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not JSON ({exc})") from None
    if not isinstance(records, list):
        raise ValueError(f"{source}: expected a list of records")
    intents: dict[str, Intent] = {}
    for number, record in enumerate(records):
        task = record.get("task") if isinstance(record, dict) else None
        where = f"{source}: record {number} (task {task})"
        if not isinstance(task, str) or not task:
            raise ValueError(f"{where}: task: expected a non-empty string")
        if task in intents:
            raise ValueError(f"{where}: task: a second record for this task")
        body = {k: v for k, v in record.items() if k != "task"}
        try:
            intents[task] = _intent(body)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return intents


def _intent(body: dict[str, Any]) -> Intent:
    _check(body, Intent, "")
    for index, request in enumerate(body["requests"]):
        try:  # the kind's own rules (known kind, reason, cabin, ...), one request at a time
            Intent.from_json({"user_id": "", "name": "", "requests": [request]})
        except ValueError as exc:  # named as the one request checked: renamed by its index
            reason = str(exc).removeprefix("requests[0]: ")
            raise ValueError(f"requests[{index}]: {reason}") from None
    return Intent.from_json(body)


def _check(value: Any, hint: Any, path: str) -> None:
    """Raise ``ValueError("path: ...")`` where ``value`` does not fit the type ``hint``."""
    origin, args = get_origin(hint), get_args(hint)
    if is_dataclass(hint):
        _check_fields(value, hint, path)
    elif origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return
        _check(value, next(a for a in args if a is not type(None)), path)
    elif origin is Literal:
        if value not in args:
            raise ValueError(f"{path}: {value!r} is not one of {', '.join(map(str, args))}")
    elif origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{path}: expected a list, got {type(value).__name__}")
        for index, item in enumerate(value):
            _check(item, args[0], f"{path}[{index}]")
    elif origin is Mapping:
        if not isinstance(value, dict):
            raise ValueError(f"{path}: expected an object, got {type(value).__name__}")
        for key, item in value.items():
            _check(item, args[1], f"{path}.{key}")
    elif not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise ValueError(f"{path}: expected {hint.__name__}, got {type(value).__name__}")


def _check_fields(value: Any, cls: Any, path: str) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{path or cls.__name__}: expected an object, got {type(value).__name__}")
    hints = get_type_hints(cls)
    prefix = f"{path}." if path else ""
    for key in value:
        if key not in hints:
            raise ValueError(f"{prefix}{key}: not a field of {cls.__name__}")
    for f in fields(cls):
        if f.name in value:
            _check(value[f.name], hints[f.name], prefix + f.name)
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ValueError(f"{prefix}{f.name}: missing")
