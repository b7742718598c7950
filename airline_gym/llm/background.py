"""One private event loop in a daemon thread: how blocking calls run the async request path.

A blocking :meth:`~airline_gym.llm.LiteLLMChatModel.complete` submits its coroutine here and
waits. A request that is given up on (its deadline passed, or the caller was interrupted) is
cancelled on this loop, which closes its connection: no thread or socket outlives it.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_blocking"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_owner_pid = 0


def _start() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    atexit.register(_shutdown, loop)

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    threading.Thread(target=serve, name="airline-gym-llm-loop", daemon=True).start()
    ready.wait()
    return loop


def _shared_loop() -> asyncio.AbstractEventLoop:
    global _loop, _owner_pid
    with _lock:
        if _loop is None or _owner_pid != os.getpid() or _loop.is_closed():
            _loop, _owner_pid = _start(), os.getpid()  # also after a fork: the thread is gone
        return _loop


def _shutdown(loop: asyncio.AbstractEventLoop) -> None:
    """At exit: close what lives on the loop (connection pools close with its async gens)."""
    if loop.is_closed() or not loop.is_running():
        return
    future = asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop)
    with contextlib.suppress(Exception):
        future.result(timeout=5)
    loop.call_soon_threadsafe(loop.stop)


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the shared loop and wait for it; cancels it if the wait is interrupted."""
    future = asyncio.run_coroutine_threadsafe(coro, _shared_loop())
    try:
        return future.result()
    except BaseException:
        if not future.done():  # interrupted (e.g. KeyboardInterrupt): stop the request too
            future.cancel()
            concurrent.futures.wait([future], timeout=5)
        raise
