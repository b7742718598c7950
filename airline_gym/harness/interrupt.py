"""Ctrl-C during a run: stop starting episodes at once, then stop the run within a grace period.

While :class:`StopOnInterrupt` is active (in the main thread, and only if SIGINT still has
Python's default handler), the first SIGINT only records the request: the caller starts no new
episode, lets those in flight finish for up to :data:`GRACE_SECONDS` and abandons the rest,
then raises :class:`Interrupted`. A second SIGINT raises ``KeyboardInterrupt`` at once. Nothing
is interrupted mid-write, so every journal line written is whole.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from types import FrameType, TracebackType

__all__ = ["GRACE_SECONDS", "Interrupted", "StopOnInterrupt"]

#: How long episodes in flight may take to finish after Ctrl-C before they are abandoned.
GRACE_SECONDS = 1.5


class Interrupted(KeyboardInterrupt):
    """The run was stopped by Ctrl-C: ``saved`` of ``total`` simulations are in ``journal``
    (``None`` without a results file); ``str()`` says so and how to continue."""

    def __init__(self, saved: int, total: int, journal: Path | None) -> None:
        self.saved, self.total, self.journal = saved, total, journal
        done = f"{saved} of {total} simulations"
        if journal is None:
            super().__init__(f"interrupted after {done} (no results file: out was not given)")
        else:
            super().__init__(
                f"interrupted: {done} saved in {journal}; call evaluate() again with "
                "resume=True to play the rest"
            )


class StopOnInterrupt:
    """A context manager that turns the first SIGINT into a stop request (see the module)."""

    def __init__(self) -> None:
        self.requested_at: float | None = None
        self._previous: object = None
        self._installed = False

    @property
    def requested(self) -> bool:
        """Whether Ctrl-C was pressed: start no new episode."""
        return self.requested_at is not None

    def request(self) -> None:
        """Stop as Ctrl-C would (start no new episode), at the caller's request."""
        if self.requested_at is None:
            self.requested_at = time.monotonic()

    def overdue(self) -> bool:
        """Whether the grace period for the episodes in flight is over: abandon them."""
        at = self.requested_at
        return at is not None and time.monotonic() - at >= GRACE_SECONDS

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested_at is not None:
            raise KeyboardInterrupt
        self.requested_at = time.monotonic()

    def __enter__(self) -> StopOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.getsignal(signal.SIGINT)
            if self._previous is signal.default_int_handler:
                signal.signal(signal.SIGINT, self._handle)
                self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self._installed = False
