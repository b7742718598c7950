"""OpenAI function-calling schemas for the tools, built from their signatures and docstrings.

The tool docstrings are the product text the LLM reads: the first paragraph(s) become the
description and the ``Args:`` section the per-argument descriptions.
"""

from __future__ import annotations

import inspect
import re
import typing
from functools import cache
from typing import Any, Literal, get_args, get_origin, is_typeddict

from airline_gym.domain.tools import FIELD_DESCRIPTIONS, TOOLS, ToolFunction

JSONSchema = dict[str, Any]
_ARG_LINE = re.compile(r"^    (\w+): (.*)$")


def split_docstring(func: ToolFunction) -> tuple[str, dict[str, str]]:
    """(description, {argument: description}) from a Google-style docstring."""
    body, _, args_section = (inspect.getdoc(func) or "").partition("\nArgs:\n")
    args: dict[str, str] = {}
    current = ""
    for line in args_section.splitlines():
        match = _ARG_LINE.match(line)
        if match:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current and line.strip():
            args[current] += " " + line.strip()
    return body.strip(), args


def type_schema(annotation: Any) -> JSONSchema:
    """JSON schema of one annotation used by the tools."""
    if annotation is str:
        return {"type": "string"}
    if annotation is int:
        return {"type": "integer"}
    if get_origin(annotation) is Literal:
        return {"type": "string", "enum": list(get_args(annotation))}
    if get_origin(annotation) is list:
        return {"type": "array", "items": type_schema(get_args(annotation)[0])}
    if is_typeddict(annotation):
        hints = typing.get_type_hints(annotation)
        return {
            "type": "object",
            "properties": {
                name: {**type_schema(hint), "description": FIELD_DESCRIPTIONS[name]}
                for name, hint in hints.items()
            },
            "required": list(hints),
        }
    raise TypeError(f"no JSON schema for {annotation!r}")


@cache
def parameters(func: ToolFunction) -> dict[str, Any]:
    """Typed parameters of a tool (without the leading ``db``), in signature order."""
    hints = typing.get_type_hints(func)
    names = list(inspect.signature(func).parameters)[1:]
    return {name: hints[name] for name in names}


@cache
def tool_schemas() -> tuple[JSONSchema, ...]:
    """The 14 tools in the reference's order, as OpenAI ``{"type": "function", ...}`` dicts."""
    out = []
    for name, func in TOOLS.items():
        description, arg_docs = split_docstring(func)
        params = parameters(func)
        properties = {
            arg: {**type_schema(hint), "description": arg_docs[arg]} for arg, hint in params.items()
        }
        out.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": description,
                    "parameters": {
                        "type": "object",
                        "properties": properties,
                        "required": list(params),
                        "additionalProperties": False,
                    },
                },
            }
        )
    return tuple(out)
