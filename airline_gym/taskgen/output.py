"""Write generated task records as a tasks.json file, record by record.

The text is what ``json.dump(records, f, indent=2)`` writes, plus a final newline, but made one
record at a time (:class:`TasksText`), so a file of any size is written without holding it (or
its records) in memory; the file itself is an :class:`~airline_gym.data.output.OutputFile`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from airline_gym.data.output import OutputFile

__all__ = ["TasksText", "write_tasks"]


class TasksText:
    """The text of a tasks.json, one record at a time: :meth:`record` for each, then
    :meth:`end` (``json.dump``'s indent of 2, ASCII only, so a character is a byte)."""

    def __init__(self) -> None:
        self.count = 0

    def record(self, record: dict[str, Any]) -> str:
        """The text of the next record (with the separator before it)."""
        body = json.dumps(record, indent=2).replace("\n", "\n  ")
        self.count += 1
        return ("[\n  " if self.count == 1 else ",\n  ") + body

    def end(self) -> str:
        """The text after the last record."""
        return "\n]\n" if self.count else "[]\n"


def write_tasks(records: Iterable[dict[str, Any]], out: str | os.PathLike[str]) -> None:
    """Write ``records`` as tasks.json (two-space indent, a final newline), atomically."""
    text = TasksText()
    with OutputFile(out) as file:
        for record in records:
            file.write(text.record(record))
        file.write(text.end())
