"""Progress of long work on stderr: live on a terminal, plain lines otherwise.

On a terminal with ``rich`` installed (the ``cli``/``test`` extras) the status is one line that
updates in place: a spinner, or with ``total`` a bar with a done/total count; anywhere else
(pipes, CI logs, no ``rich``) each update is one plain line. A spinner's last line says how
long the work took. stdout stays clean for the command's own output.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """``with Progress("title") as p: ... p.update("what now") ...``; with ``total=N``, a bar:
    ``p.count(done, status, line)`` (``line`` is what a plain stream gets, if anything)."""

    def __init__(self, title: str, stream: TextIO | None = None, total: int | None = None) -> None:
        self.title = title
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self._live: Any = None
        self._task: Any = None
        self._start = 0.0

    def _make_live(self) -> Any:
        """A rich status (or bar) on a terminal, else None."""
        if not getattr(self.stream, "isatty", lambda: False)():
            return None
        try:
            from rich import progress
            from rich.console import Console
        except ImportError:
            return None
        console = Console(file=self.stream)
        if self.total is None:
            return console.status(self.title)
        return progress.Progress(
            progress.TextColumn(self.title),
            progress.BarColumn(),
            progress.MofNCompleteColumn(),
            progress.TextColumn("{task.fields[status]}"),
            progress.TimeElapsedColumn(),
            progress.TimeRemainingColumn(),
            console=console,
        )

    def __enter__(self) -> Progress:
        self._start = time.perf_counter()
        self._live = self._make_live()
        if self._live is not None:
            self._live.start()
        elif self.total is None:
            self._print(f"{self.title} ...")
        return self

    def update(self, text: str) -> None:
        """Say what the work is doing now."""
        if self._live is not None:
            self._live.update(f"{self.title}: {text}")
        else:
            self._print(f"{self.title}: {text}")

    def count(self, done: int, status: str, line: str | None = None) -> None:
        """``done`` of ``total`` finished; ``status`` shows beside the bar, ``line`` on a plain
        stream (nothing there when ``None``)."""
        if self._live is None:
            if line is not None:
                self._print(line)
        elif self._task is None:
            self._task = self._live.add_task("", total=self.total, completed=done, status=status)
        else:
            self._live.update(self._task, completed=done, status=status)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
        if self.total is None:
            elapsed = time.perf_counter() - self._start
            self._print(f"{self.title}: {'failed' if kind else 'done'} after {elapsed:.1f} s")

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
