"""Run a coroutine that never suspends without an event loop: one body serves a blocking caller
(whose awaits all return at once) and an async one."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

R = TypeVar("R")


def run_sync(coroutine: Coroutine[Any, Any, R]) -> R:
    """The value of a coroutine that never suspends, without an event loop.

    >>> async def double(x: int) -> int:
    ...     return 2 * x
    >>> run_sync(double(21))
    42
    """
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a synchronous run awaited something")  # pragma: no cover
