"""Read the texts of the reference's tool schemas from its source files, without importing it.

The descriptions a model reads in the tools array are the reference's words (spec §7, §13.10):
each tool's docstring (summary line, plus the rest of the description when there is one, and
the ``Args:`` entries), the ``Field(description=...)`` strings of the ``FlightInfo``,
``Passenger`` and ``Payment`` models, and the gym's ``done`` docstring. They live in the
fetched package's ``tau2/domains/airline/tools.py``, ``data_model.py`` and
``tau2/gym/gym_agent.py`` (see :mod:`airline_gym.data`); here they are read with ``ast`` and the
docstrings are split the way the reference's parser (``docstring_parser``, Google style) does.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
from dataclasses import dataclass
from functools import cache

from airline_gym.data import DataError, data_files
from airline_gym.data.limits import TEXT_MAX_BYTES, read_limited_text

# Google-style section titles the reference's docstring parser knows; ``Args``-like ones hold
# the argument descriptions.
_TITLES = (
    "Arguments|Args|Parameters|Params|Raises|Exceptions|Except|Attributes|Example|Examples|"
    "Returns|Yields"
)
_SECTION = re.compile(rf"^({_TITLES}):[ \t\r\f\v]*$", re.M)
_PARAM_SECTIONS = frozenset({"Arguments", "Args", "Parameters", "Params"})
_TYPED_ARG = re.compile(r"\s*(.+?)\s*\(\s*(.*[^\s]+)\s*\)")
_MODELS = ("FlightInfo", "Passenger", "Payment")


@dataclass(frozen=True)
class ToolText:
    """What a tool's docstring says: its description and one description per argument."""

    description: str
    arguments: dict[str, str]


@dataclass(frozen=True, eq=False)
class ReferenceTexts:
    """All schema texts: tools by name (source order), model fields, and the ``done`` tool.

    Compared and hashed by identity (one object per set of source files); treat as read-only.
    """

    tools: dict[str, ToolText]
    fields: dict[str, dict[str, str]]
    done: str


def parse_docstring(doc: str, name: str) -> ToolText:
    """Split a Google-style docstring as the reference does (``docstring_parser`` + ``Tool``).

    The description is the first line, plus ``"\\n\\n"`` and the rest of the text before the
    first section when there is any; argument descriptions come from ``Args:``-like sections.
    """
    text = inspect.cleandoc(doc)
    match = _SECTION.search(text)
    head, meta = (text[: match.start()], text[match.start() :]) if match else (text, "")
    short, _, rest = head.partition("\n")
    long = rest.strip()
    description = short or name
    if long and short:
        description = f"{short}\n\n{long}"
    arguments: dict[str, str] = {}
    titles = list(_SECTION.finditer(meta))
    for i, title in enumerate(titles):
        if title.group(1) not in _PARAM_SECTIONS:
            continue
        end = titles[i + 1].start() if i + 1 < len(titles) else len(meta)
        chunk = meta[title.end() : end]
        unknown = re.search(r"\n\S", chunk)  # an unindented line ends the section
        if unknown is not None:
            chunk = chunk[: unknown.start()]
        arguments.update(_arguments(chunk.strip("\n")))
    return ToolText(description, arguments)


def _arguments(chunk: str) -> dict[str, str]:
    """``{name: description}`` of one ``Args:`` section body."""
    indent = re.match(r"^\s*", chunk)
    assert indent is not None  # \s* always matches
    starts = list(re.finditer("^" + re.escape(indent.group()) + r"(?=\S)", chunk, flags=re.M))
    out: dict[str, str] = {}
    for i, start in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(chunk)
        part = chunk[start.end() : end].strip("\n")
        if ":" not in part:
            continue
        before, desc = part.split(":", 1)
        if before and "\n" in before:
            first, more = before.split("\n", 1)
            before = first + inspect.cleandoc(more)
        if desc:
            desc = desc[1:] if desc[0] == " " else desc
            if "\n" in desc:
                first, more = desc.split("\n", 1)
                desc = first + "\n" + inspect.cleandoc(more)
            desc = desc.strip("\n")
        typed = _TYPED_ARG.match(before)
        out[typed.group(1) if typed else before] = desc
    return out


def _parse(path: str) -> ast.Module:
    try:
        return ast.parse(read_limited_text(path, TEXT_MAX_BYTES, "source file"), filename=path)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise DataError(f"Cannot read the reference source {path}: {exc}") from exc


def _tool_docstrings(tree: ast.Module) -> dict[str, str]:
    """Docstrings of the public methods of the toolkit class (``AirlineTools``), in order."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "AirlineTools":
            return {
                item.name: ast.get_docstring(item, clean=False) or ""
                for item in node.body
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
            }
    return {}


def _field_descriptions(tree: ast.Module) -> dict[str, dict[str, str]]:
    """``Field(description=...)`` strings of the argument models, by model and field."""
    out: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name in _MODELS):
            continue
        fields: dict[str, str] = {}
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            call = item.value
            if isinstance(call, ast.Call):
                for keyword in call.keywords:
                    value = keyword.value
                    if keyword.arg == "description" and isinstance(value, ast.Constant):
                        fields[item.target.id] = str(value.value)
        out[node.name] = fields
    return out


def _function_docstring(tree: ast.Module, name: str) -> str | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_docstring(node, clean=False)
    return None


@cache
def _read(tools_path: str, model_path: str, gym_path: str) -> ReferenceTexts:
    docs = _tool_docstrings(_parse(tools_path))
    if not docs:
        raise DataError(f"No AirlineTools class with tool methods in {tools_path}")
    fields = _field_descriptions(_parse(model_path))
    missing = [m for m in _MODELS if m not in fields]
    if missing:
        raise DataError(f"No model {', '.join(missing)} in {model_path}")
    done_doc = _function_docstring(_parse(gym_path), "done")
    if done_doc is None:
        raise DataError(f"No function done() in {gym_path}")
    return ReferenceTexts(
        tools={name: parse_docstring(doc, name) for name, doc in docs.items()},
        fields=fields,
        done=parse_docstring(done_doc, "done").description,
    )


def reference_texts(data_dir: str | os.PathLike[str] | None = None) -> ReferenceTexts:
    """The schema texts of the data in use (cached per set of source files)."""
    files = data_files(data_dir)
    return _read(str(files.tools_source), str(files.data_model_source), str(files.gym_agent_source))
