"""Progress of long work on stderr: a live status line on a terminal, plain lines otherwise.

On a terminal with ``rich`` installed (the ``cli``/``test`` extras) the status is one spinner
line that updates in place; anywhere else (pipes, CI logs, no ``rich``) each update is one
plain line. Either way the last line says how long the work took, and stdout stays clean
for the command's own output.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """``with Progress("title") as p: ... p.update("what now") ...``."""

    def __init__(self, title: str, stream: TextIO | None = None) -> None:
        self.title = title
        self.stream = stream if stream is not None else sys.stderr
        self._status: Any = None
        self._start = 0.0

    def _live(self) -> Any:
        """A rich status on a terminal, else None."""
        if not getattr(self.stream, "isatty", lambda: False)():
            return None
        try:
            from rich.console import Console
        except ImportError:
            return None
        return Console(file=self.stream).status(self.title)

    def __enter__(self) -> Progress:
        self._start = time.perf_counter()
        self._status = self._live()
        if self._status is not None:
            self._status.start()
        else:
            self._print(f"{self.title} ...")
        return self

    def update(self, text: str) -> None:
        """Say what the work is doing now."""
        if self._status is not None:
            self._status.update(f"{self.title}: {text}")
        else:
            self._print(f"{self.title}: {text}")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._status is not None:
            self._status.stop()
        elapsed = time.perf_counter() - self._start
        self._print(f"{self.title}: {'failed' if kind else 'done'} after {elapsed:.1f} s")

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
