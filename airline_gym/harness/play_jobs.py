"""Play a run's jobs concurrently, on one event loop or in threads, and stop cleanly on Ctrl-C.

After Ctrl-C (see :mod:`airline_gym.harness.interrupt`) no job starts; the jobs in flight get
:data:`~airline_gym.harness.interrupt.GRACE_SECONDS` to finish (each one that does is reported
as usual) and are then abandoned: cancelled on the event loop, left to their threads otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from airline_gym.harness.interrupt import StopOnInterrupt
from airline_gym.harness.runner import arun_pool

__all__ = ["play_jobs"]

J = TypeVar("J", bound=tuple[Any, ...])
R = TypeVar("R")
_POLL_SECONDS = 0.1  # how often a stopped run checks whether its grace period is over


def play_jobs(
    jobs: list[J],
    concurrency: int,
    on_result: Callable[[R], None],
    *,
    aplay: Callable[[Any, J], Awaitable[R]] | None = None,
    make_env: Callable[[], Any] | None = None,
    play: Callable[..., R] | None = None,
    stop: StopOnInterrupt | None = None,
) -> bool:
    """Play every job, ``concurrency`` at a time, calling ``on_result`` as each ends.

    With ``aplay(env, job)`` and ``make_env``: on one event loop (one env per concurrent slot);
    else ``play(*job)`` in threads. ``stop``: a caller's own (``on_result`` may request it).
    Returns whether Ctrl-C (or the caller) stopped the run early.
    """
    with stop or StopOnInterrupt() as stop:
        if aplay is not None:
            assert make_env is not None, "aplay needs make_env"
            asyncio.run(_play_async(jobs, concurrency, on_result, aplay, make_env, stop))
        else:
            assert play is not None, "give aplay and make_env, or play"
            _play_threads(jobs, concurrency, on_result, play, stop)
    return stop.requested


async def _play_async(
    jobs: list[J],
    concurrency: int,
    on_result: Callable[[R], None],
    aplay: Callable[[Any, J], Awaitable[R]],
    make_env: Callable[[], Any],
    stop: StopOnInterrupt,
) -> None:
    async def unless_stopped(env: Any, job: J) -> R | None:
        return None if stop.requested else await aplay(env, job)

    def ended(index: int, result: R | None) -> None:
        if result is not None:
            on_result(result)

    pool = asyncio.ensure_future(
        arun_pool(make_env, jobs, unless_stopped, concurrency, ended, keep=False)
    )
    while not pool.done():
        await asyncio.wait({pool}, timeout=_POLL_SECONDS)
        if stop.overdue():
            pool.cancel()  # the episodes still in flight are abandoned
            break
    if stop.requested:
        with contextlib.suppress(asyncio.CancelledError):
            await pool
    else:
        await pool


def _play_threads(
    jobs: list[J],
    concurrency: int,
    on_result: Callable[[R], None],
    play: Callable[..., R],
    stop: StopOnInterrupt,
) -> None:
    pool = ThreadPoolExecutor(max_workers=concurrency)
    pending: set[Future[R]] = set()
    todo = list(reversed(jobs))
    try:
        while pending or (todo and not stop.requested):
            while todo and not stop.requested and len(pending) < concurrency:
                pending.add(pool.submit(play, *todo.pop()))
            ended, pending = wait(pending, timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in ended:
                on_result(future.result())
            if stop.overdue():
                break  # abandoned: their threads end on their own, their results are dropped
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=not stop.requested, cancel_futures=True)
