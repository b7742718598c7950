"""What ``airline-gym serve`` tells uvicorn so that idle connections cannot lock clients out.

uvicorn gives a new connection no deadline until its first request is complete, and counts no
connections: 1,100 that never finish their headers take every file a 1,024-file process may
open, and then nothing is accepted (``/health`` neither). asyncio's accept loop then logs
"Too many open files" with a traceback once per queued connection per pass (thousands a
second). Here:

- :func:`bounded_http_protocol`: uvicorn's h11 protocol with a cap on open connections (a
  connection over it closes the one that has waited longest for its request headers, or itself
  when none is waiting) and a deadline for each request's headers and body (from the
  connection's start, or from the end of the previous response); see
  :data:`DEFAULT_HEADER_TIMEOUT`.
- :func:`default_max_connections`: the cap that fits the process's open-file limit.
- :class:`GuardedListener`: out of open files, a connection that cannot be accepted is closed
  at once and one line is logged, at most once a minute (not a traceback per connection).
- :func:`quiet_clean_disconnects`: no traceback for a WebSocket session its client ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import resource
import socket
import time
from typing import Any

from airline_gym.errors import MissingDependencyError

try:
    import h11
    from starlette.websockets import WebSocketDisconnect
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError(
        "airline_gym.integrations.connections", "uvicorn", "openenv"
    ) from None

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "GuardedListener",
    "bounded_http_protocol",
    "default_max_connections",
    "quiet_clean_disconnects",
]

#: Seconds a connection may take to send a request's headers and body (``--header-timeout``;
#: a body is at most ``--max-message-bytes``, 1 MiB): a client on the same cluster sends them in
#: milliseconds.
DEFAULT_HEADER_TIMEOUT = 10.0
#: Open files kept free of connections: the server's own (listening socket, logs, data files,
#: the event loop's) and each session's (an LLM customer's pooled connection).
SPARE_FILES = 64
#: At most one "cannot accept" line per this many seconds.
FLOOD_LOG_INTERVAL = 60.0
#: accept()'s errors when the process or the system is out of files or buffers.
OUT_OF_FILES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})

log = logging.getLogger("uvicorn.error")  # where uvicorn's own warnings go


def default_max_connections(max_sessions: int) -> int:
    """The open-file limit less a file per session and :data:`SPARE_FILES` (at least 16)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(16, soft - max_sessions - SPARE_FILES)


class BoundedH11Protocol(H11Protocol):  # type: ignore[misc,unused-ignore]
    """uvicorn's h11 protocol with a connection cap and a deadline for each request."""

    max_connections = 1024
    header_timeout = DEFAULT_HEADER_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.waiting_since: float | None = None
        self._header_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._wait_for_headers()
        if len(self.connections) > self.max_connections:
            self._make_room()

    def _make_room(self) -> None:
        """Close the connection waiting longest for its headers (this one when none else)."""
        waiting = [
            c
            for c in self.connections
            if c is not self and getattr(c, "waiting_since", None) is not None
        ]
        oldest = min(waiting, key=lambda c: c.waiting_since, default=self)
        oldest.drop()

    def drop(self) -> None:
        """Close this connection, which has not sent (all of) a request's headers or body."""
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()

    def _wait_for_headers(self) -> None:
        self._stop_waiting()
        self.waiting_since = time.monotonic()
        self._header_timer = self.loop.call_later(self.header_timeout, self.drop)

    def _stop_waiting(self) -> None:
        self.waiting_since = None
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def handle_events(self) -> None:
        super().handle_events()
        if self.waiting_since is not None and not self._receiving_request():
            self._stop_waiting()  # a whole request is in (or the connection is upgraded)

    def _receiving_request(self) -> bool:
        """Whether a request's headers or body are still on their way (a body is bounded like
        headers: one sent a byte at a time holds a connection as long)."""
        state = self.conn.their_state
        if state is h11.IDLE:
            return True
        upgraded = self.transport.get_protocol() is not self  # a WebSocket's frames are not a body
        return state is h11.SEND_BODY and not upgraded

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._wait_for_headers()  # for the next request (a pipelined one stops it at once)
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)


def bounded_http_protocol(max_connections: int, header_timeout: float) -> type[H11Protocol]:
    """:class:`BoundedH11Protocol` with these limits: uvicorn's ``Config(http=...)``."""
    settings: dict[str, Any] = {
        "max_connections": max_connections,
        "header_timeout": header_timeout,
    }
    return type("BoundedH11Protocol", (BoundedH11Protocol,), settings)


class GuardedListener(socket.socket):
    """A listening socket that, out of open files, closes the connection it cannot accept.

    asyncio's accept loop, given the error, logs a traceback and schedules a retry once per
    connection in its batch (up to the backlog, 2,048) every time the socket is ready. Here
    a file kept spare is given up for a moment to accept the connection and close it at once
    (its client sees the connection reset), and asyncio is told that the batch is over
    (``ConnectionAbortedError``). One line is logged, at most once a minute.
    """

    def __init__(self, listening: socket.socket) -> None:
        family, kind, proto = listening.family, listening.type, listening.proto
        super().__init__(family, kind, proto, fileno=listening.detach())
        self._spare: int | None = os.open(os.devnull, os.O_RDONLY)
        self.shed, self._logged_at, self._left_out = 0, -FLOOD_LOG_INTERVAL, 0

    def accept(self) -> tuple[socket.socket, Any]:
        try:
            return super().accept()
        except OSError as exc:
            if exc.errno not in OUT_OF_FILES:
                raise
            self._shed_one(exc)
            raise ConnectionAbortedError(exc.errno, exc.strerror) from None

    def _shed_one(self, exc: OSError) -> None:
        if self._spare is not None:
            os.close(self._spare)
        try:
            super().accept()[0].close()
            self.shed += 1
        except OSError:
            pass  # gone meanwhile, or not even one file free: the next try does it
        finally:
            with contextlib.suppress(OSError):
                self._spare = os.open(os.devnull, os.O_RDONLY)
        now = time.monotonic()
        if now - self._logged_at < FLOOD_LOG_INTERVAL:
            self._left_out += 1
            return
        log.warning(
            "cannot accept a connection: %s; closing new ones at once until files are free "
            "(logged at most once a minute; %d left out since). Raise the open-file limit "
            "(ulimit -n) or lower --max-connections",
            exc.strerror or exc,
            self._left_out,
        )
        self._logged_at, self._left_out = now, 0

    def close(self) -> None:
        if self._spare is not None:
            with contextlib.suppress(OSError):
                os.close(self._spare)
            self._spare = None
        super().close()


class _CleanDisconnects(logging.Filter):
    """Drops uvicorn's error record for a WebSocket session its client ended normally."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], WebSocketDisconnect))


def quiet_clean_disconnects(logger: str = "uvicorn.error") -> None:
    """Stop a traceback being logged each time a client closes its ``/mcp`` WebSocket session.

    openenv-core's WebSocket handlers close the socket in a ``finally`` that expects a
    ``RuntimeError`` when the client has already gone, but starlette raises
    ``WebSocketDisconnect``, which uvicorn logs as "Exception in ASGI application" for a session
    that ended normally (OpenEnv issue 1159). Only that exception type is dropped.
    """
    target = logging.getLogger(logger)
    if not any(isinstance(f, _CleanDisconnects) for f in target.filters):
        target.addFilter(_CleanDisconnects())
