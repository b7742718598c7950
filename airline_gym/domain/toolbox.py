"""Run one tool call against an episode's database, the way the reference environment does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.tools import TOOLS, ToolError
from airline_gym.domain.validation import ArgumentError, short_repr, validate_arguments


@dataclass(frozen=True)
class ToolResult:
    """What the agent sees for one call: ``content`` (``Error: ...`` when ``error``)."""

    name: str
    content: str
    error: bool


def to_content(value: Any) -> str:
    """The reference's serialisation: strings pass through, everything else is JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def parse_arguments(arguments: Any) -> Any:
    """Decode JSON-string arguments (OpenAI wire format); other values pass through."""
    if isinstance(arguments, (str, bytes)):
        text = arguments.strip() if isinstance(arguments, str) else arguments
        if not text:
            return {}
        try:
            return json.loads(text)
        except RecursionError:
            raise ArgumentError("arguments are not valid JSON (nested too deeply)") from None
        except ValueError as exc:
            if "integer string conversion" in str(exc):  # over Python's 4,300-digit limit
                raise ArgumentError("a number in the arguments is too large") from None
            raise ArgumentError(f"arguments are not valid JSON ({exc})") from None
    return arguments


def execute(db: AirlineDB, name: str, arguments: Any) -> ToolResult:
    """Run tool ``name`` with ``arguments`` (a dict or its JSON string); never raises."""
    func = TOOLS.get(name) if isinstance(name, str) else None
    if func is None:
        shown = name if isinstance(name, str) and len(name) <= 256 else short_repr(name)[:60]
        return ToolResult(str(shown), f"Error: Tool '{shown}' not found.", True)
    try:
        args = validate_arguments(name, func, parse_arguments(arguments))
        return ToolResult(name, to_content(func(db, **args)), False)
    except ArgumentError as exc:
        message = str(exc)
        if not message.startswith("invalid arguments"):
            message = f"invalid arguments for {name}: {message}"
        return ToolResult(name, f"Error: {message}", True)
    except ToolError as exc:
        return ToolResult(name, f"Error: {exc}", True)
    except Exception as exc:  # as the reference: any failure of a tool is an error result
        return ToolResult(name, f"Error: {type(exc).__name__}: {exc}", True)
