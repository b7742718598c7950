"""The calling thread's CPU time: what a bound on the *cost* of some work should measure.

On a shared 2-core machine wall time says more about the other jobs than about the code under
test: at load 14-21 a pure-Python loop measured 20-50 times its CPU time in wall time. A
quadratic path costs CPU whatever the load, so a cost bound on CPU time catches it just as a
wall-time bound did on an idle machine (CPU time never exceeds the wall time of the same
thread), without failing when the machine is busy. Waiting (sleeps, I/O, other threads) is
not counted: bound those with events or wall-clock deadlines instead.
Importable from any test module (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def cpu_clock() -> Iterator[Callable[[], float]]:
    """``with cpu_clock() as spent: ...``; ``spent()``: this thread's CPU seconds in the block.

    Inside the block, the seconds so far; after it, the block's total.
    """
    start, end = time.thread_time(), None

    def spent() -> float:
        return (time.thread_time() if end is None else end) - start

    try:
        yield spent
    finally:
        end = time.thread_time()
