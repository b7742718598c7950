"""The tools array a model reads: the reference's OpenAI schemas, byte for byte (spec §7, §13.10).

The texts (tool descriptions, argument and field descriptions, the gym's ``done`` tool) are read
from the fetched reference sources at run time (:mod:`airline_gym.domain.reference_texts`); the
types come from our tools' signatures. The layout is what the reference gets from pydantic's
``model_json_schema()`` for a model titled ``"parameters"``: keys sorted, except inside
``properties``; a ``title`` per property (the name title-cased); ``enum`` + ``type`` for
literals; lists of objects as ``items: {"anyOf": [{"$ref": "#/$defs/<Model>"},
{"additionalProperties": true, "type": "object"}]}`` with the model under ``$defs``; ``required``
absent when there are no arguments. ``json.dumps`` of each schema equals the reference's (a
differential test checks it).
"""

from __future__ import annotations

import inspect
import os
import pickle
import typing
from functools import cache
from typing import Any, Literal, get_args, get_origin, is_typeddict

from airline_gym.domain.reference_texts import ReferenceTexts, reference_texts
from airline_gym.domain.tools import TOOLS, FlightInfo, PassengerInfo, PaymentEntry, ToolFunction

JSONSchema = dict[str, Any]

#: The reference's model name of each argument object type (its ``$defs`` key).
MODEL_NAMES: dict[Any, str] = {
    FlightInfo: "FlightInfo",
    PassengerInfo: "Passenger",
    PaymentEntry: "Payment",
}
DONE_TOOL = "done"


@cache
def parameters(func: ToolFunction) -> dict[str, Any]:
    """Typed parameters of a tool (without the leading ``db``), in signature order."""
    hints = typing.get_type_hints(func)
    names = list(inspect.signature(func).parameters)[1:]
    return {name: hints[name] for name in names}


def _title(name: str) -> str:
    return name.replace("_", " ").title()


def _property(name: str, annotation: Any, description: str | None, defs: JSONSchema) -> JSONSchema:
    """One property, keys in pydantic's (sorted) order; object types are added to ``defs``."""
    prop: JSONSchema = {}
    if description is not None:
        prop["description"] = description
    if annotation is str:
        prop.update(title=_title(name), type="string")
    elif annotation is int:
        prop.update(title=_title(name), type="integer")
    elif get_origin(annotation) is Literal:
        prop.update(enum=list(get_args(annotation)), title=_title(name), type="string")
    elif get_origin(annotation) is list and is_typeddict(get_args(annotation)[0]):
        model = MODEL_NAMES[get_args(annotation)[0]]
        any_of = [{"$ref": f"#/$defs/{model}"}, {"additionalProperties": True, "type": "object"}]
        prop.update(items={"anyOf": any_of}, title=_title(name), type="array")
        defs[model] = get_args(annotation)[0]
    else:  # pragma: no cover - every tool annotation is handled above
        raise TypeError(f"no JSON schema for {annotation!r}")
    return prop


def _object(title: str, properties: JSONSchema, required: list[str]) -> JSONSchema:
    schema: JSONSchema = {"properties": properties}
    if required:
        schema["required"] = required
    schema.update(title=title, type="object")
    return schema


def _model_schema(model: str, typed_dict: Any, texts: ReferenceTexts) -> JSONSchema:
    hints = typing.get_type_hints(typed_dict)
    descriptions = texts.fields.get(model, {})
    properties = {
        field: _property(field, hint, descriptions.get(field), {}) for field, hint in hints.items()
    }
    return _object(model, properties, list(hints))


def _tool_schema(name: str, func: ToolFunction, texts: ReferenceTexts) -> JSONSchema:
    text = texts.tools.get(name)
    arg_docs = text.arguments if text is not None else {}
    params = parameters(func)
    defs: JSONSchema = {}
    properties = {
        arg: _property(arg, hint, arg_docs.get(arg), defs) for arg, hint in params.items()
    }
    schema = _object("parameters", properties, list(params))
    if defs:
        schema = {
            "$defs": {m: _model_schema(m, defs[m], texts) for m in sorted(defs)},
            **schema,
        }
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": text.description if text is not None else name,
            "parameters": schema,
        },
    }


@cache
def tools_blob(texts: ReferenceTexts, with_done: bool) -> bytes:
    """The pickled tools array for ``texts`` (14 tools, plus ``done`` if ``with_done``).

    Immutable bytes, built once per set of texts; unpickling gives fresh copies ~4x faster
    than a deep copy, so every env and episode can own its tools at little cost.
    """
    tools = [_tool_schema(name, func, texts) for name, func in TOOLS.items()]
    if with_done:
        tools.append(_done_schema(texts))
    return pickle.dumps(tools, protocol=pickle.HIGHEST_PROTOCOL)


def tool_schemas(data_dir: str | os.PathLike[str] | None = None) -> list[JSONSchema]:
    """The 14 tools in the reference's order, as OpenAI ``{"type": "function", ...}`` dicts.

    Each call returns fresh copies: changing them changes nothing else.
    """
    tools: list[JSONSchema] = pickle.loads(tools_blob(reference_texts(data_dir), False))
    return tools


def done_schema(data_dir: str | os.PathLike[str] | None = None) -> JSONSchema:
    """The gym protocol's ``done`` tool, as the reference's ``as_tool(done)`` gives it."""
    return _done_schema(reference_texts(data_dir))


def _done_schema(texts: ReferenceTexts) -> JSONSchema:
    return {
        "type": "function",
        "function": {
            "name": DONE_TOOL,
            "description": texts.done,
            "parameters": _object("parameters", {}, []),
        },
    }
