"""A time limit on awaits that never loses the caller's cancellation.

``asyncio.wait_for`` on Python 3.11 and older awaits in a task of its own; when the caller is
cancelled in the turn of the loop where that task finishes, it returns the result and drops the
cancellation (CPython issue gh-86296; 3.12 rebuilt ``wait_for`` on ``asyncio.timeout``). A
request cancelled while its reply streamed in then read on to its deadline: at one reply byte
per half millisecond, 40 of 40 cancellations were lost. ``asyncio.timeout`` (and its 3.10
backport, ``async_timeout``) awaits in the caller's own task, so a cancellation always lands.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from asyncio import timeout as time_limit
else:  # pragma: no cover - CI runs 3.11 and newer
    from async_timeout import timeout as time_limit

__all__ = ["time_limit"]
