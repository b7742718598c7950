"""Subcommands of ``airline-gym`` beyond demo/eval/regrade/bench; helpers they share.

Each module exposes ``add_arguments(parser)`` and ``run(args) -> int``; its docstring is the
command's help text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.printable import printable

__all__ = ["call_text", "format_table", "write_count"]


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Aligned plain-text columns (numbers right-aligned), headers underlined; control
    characters in a cell are shown as escapes (:func:`~airline_gym.printable.printable`)."""
    cells = [[printable(c) for c in row] for row in rows]  # text from files, escaped
    headers = [printable(h) for h in headers]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    numeric = [
        all(r[i].replace(".", "", 1).replace("/", "", 1).isdigit() for r in cells if r[i] != "-")
        and any(r[i] != "-" for r in cells)
        for i in range(len(headers))
    ]

    def line(row: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(row, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = ["-" * w for w in widths]
    return "\n".join([line(list(headers)), line(rule), *(line(r) for r in cells)])


def call_text(name: str, arguments: Any) -> str:
    """A tool call as ``name(key=value, ...)`` with JSON values."""
    if isinstance(arguments, dict):
        shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in arguments.items())
    else:
        shown = str(arguments)
    return f"{name}({shown})"


def write_count(actions: Sequence[Any]) -> int:
    """How many of a task's gold actions change the database."""
    return sum(1 for a in actions if a.name in WRITE_TOOLS)
