"""The ``tool-reply`` protocol's tools: the customer through a tool, in the form TRL renders.

TRL's ``GRPOTrainer`` ends a rollout at the first reply without a tool call, so an agent trained
there talks to the customer through a tool, ``respond_to_user(message)``, whose result is the
customer's reply, and ends with ``done``. TRL reads an environment's tools from its methods with
transformers' ``get_json_schema``, in the alphabetical order of the method names, so what a model
trained there reads as tools is that form of the reference's schemas, not the reference's array
itself. This module writes that form (no transformers needed), so ``eval``, ``warm-start`` and
every stage under the protocol offer the model the same bytes TRL rendered:

- each tool is ``{"type": "function", "function": {"name", "description", "parameters"}}``;
  the description is the reference's, stripped and dedented as a docstring is;
- ``parameters`` is ``{"type": "object", "properties": ..., "required": [...]}`` (``required``
  left out when empty), each property ``{"type", ("enum" | "items"), "description"}``: ``$ref``
  and ``anyOf`` resolve to their first concrete alternative, list items that are objects become
  ``{"type": "object"}`` and their keys, types and descriptions are spelled out at the end of the
  argument's description; no ``title``, ``$defs`` or ``additionalProperties``;
- the tools come sorted by name, ``respond_to_user`` among them.

``respond_to_user``'s schema and :data:`INSTRUCTIONS` (appended to the reference's system
prompt) are ours, not the reference's: the reference has no such tool.
``tests/integrations/test_trl.py`` checks that transformers' ``get_json_schema`` of the TRL
adapter's methods gives exactly these dicts, key order included.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "INSTRUCTIONS",
    "RESPOND_ARGUMENT",
    "RESPOND_DESCRIPTION",
    "RESPOND_TOOL",
    "argument_text",
    "respond_schema",
    "tool_reply_form",
    "tool_reply_tools",
]

JSONSchema = dict[str, Any]

#: The tool the agent reaches the customer through (ours: the reference has none).
RESPOND_TOOL = "respond_to_user"
RESPOND_DESCRIPTION = "Send a message to the customer and return the customer's reply."
RESPOND_ARGUMENT = "Your message to the customer."

#: Appended to the reference's system prompt under the protocol (ours): how to reach the customer.
INSTRUCTIONS = (
    "\n\nYou talk to the customer only through the respond_to_user tool: its argument is your "
    "message to the customer and its result is the customer's reply. Use the other tools to "
    "look up and change records. When the conversation is over, call the done tool."
)

_NEWLINES = re.compile(r"\s*\n+\s*")  # transformers joins an argument's lines the same way
_SCALARS = ("string", "integer", "number", "boolean")
_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number"}


def _resolve(schema: JSONSchema, defs: JSONSchema) -> JSONSchema:
    """A schema with ``$ref``/``anyOf`` resolved to its first concrete alternative."""
    if "anyOf" in schema:
        schema = schema["anyOf"][0]
    if "$ref" in schema:
        schema = defs[str(schema["$ref"]).rsplit("/", 1)[-1]]
    return schema


def argument_text(prop: JSONSchema, defs: JSONSchema) -> str:
    """An argument's description on one line; object list items get their keys spelled out."""
    description = _NEWLINES.sub(" ", str(prop.get("description", "")).strip())
    items = _resolve(prop.get("items", {}), defs) if prop.get("type") == "array" else {}
    if items.get("properties"):
        keys = "; ".join(
            f"{key} ({field.get('type', 'any')}) - {str(field.get('description', '')).rstrip('.')}"
            for key, field in items["properties"].items()
        )
        description = f"{description} Each item is an object with these keys: {keys}."
    return description


def _value_type(prop: JSONSchema, defs: JSONSchema) -> JSONSchema:
    """The ``type``/``enum``/``items`` part of a property, as transformers writes it."""
    prop = _resolve(prop, defs)
    if "enum" in prop:
        values = list(prop["enum"])
        kinds = list(dict.fromkeys(_JSON_TYPES[type(v)] for v in values))
        return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}
    kind = prop.get("type")
    if kind == "array":
        items = _resolve(prop.get("items", {}), defs)
        return {"type": "array", "items": _value_type(items, defs)}
    if kind == "object" or "properties" in prop:
        return {"type": "object"}
    if kind not in _SCALARS:
        raise TypeError(f"no tool-reply form for the JSON schema {json.dumps(prop)[:200]}")
    return {"type": kind}


def tool_reply_form(tool: JSONSchema) -> JSONSchema:
    """One reference tool schema in the form transformers' ``get_json_schema`` gives it."""
    function = tool["function"]
    params = function.get("parameters") or {}
    defs = params.get("$defs", {})
    properties = {
        name: {**_value_type(prop, defs), "description": argument_text(prop, defs)}
        for name, prop in (params.get("properties") or {}).items()
    }
    wanted = set(params.get("required") or ())
    parameters: JSONSchema = {"type": "object", "properties": properties}
    required = [name for name in properties if name in wanted]
    if required:
        parameters["required"] = required
    description = inspect.cleandoc(str(function.get("description", "")).strip())
    return {
        "type": "function",
        "function": {
            "name": function["name"],
            "description": description,
            "parameters": parameters,
        },
    }


def respond_schema() -> JSONSchema:
    """``respond_to_user``'s schema (ours), in the same form."""
    return {
        "type": "function",
        "function": {
            "name": RESPOND_TOOL,
            "description": RESPOND_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string", "description": RESPOND_ARGUMENT}},
                "required": ["message"],
            },
        },
    }


def tool_reply_tools(tools: Sequence[JSONSchema]) -> list[JSONSchema]:
    """The protocol's tools array: ``tools`` (the reference's, ``done`` included) in
    transformers' form plus ``respond_to_user``, sorted by name as TRL lists them."""
    converted = [tool_reply_form(tool) for tool in tools] + [respond_schema()]
    return sorted(converted, key=lambda tool: str(tool["function"]["name"]))
