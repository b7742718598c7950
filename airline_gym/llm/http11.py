"""A small keep-alive HTTP/1.1 client for asyncio: h11 parses, asyncio streams carry the bytes.

What the direct path needs and no more: one POST at a time per connection, connections kept
per (scheme, host, port) in a pool per event loop, any number at once. h11 (httpx's HTTP/1.1
state machine, a litellm dependency) does the protocol (content length, chunked replies,
keep-alive rules). Against aiohttp, measured on this path: about the same CPU per request,
~0.2 s less import before a command's first request, and the request is written to the socket
in the caller's own turn of the event loop (aiohttp writes the body from a separate task, so a
ready request waited behind every other callback of the turn: at 1,000 episodes in flight the
median wait fell from ~30 ms to ~1 ms).

``timeout`` bounds the whole request (connecting, sending, every read: each gets what is left),
so a server that drips its status line and headers cannot stretch it; the reply is read by
:class:`~airline_gym.llm.http_reply.ReplyReader` (body capped, the end of the stream handed to
h11: a close-delimited reply is accepted, one cut short of its Content-Length is not). A
connection is reused only after a complete exchange; one that failed, timed out or was
cancelled is closed, and an idle one the server has closed is noticed before use. The limits
are :func:`~airline_gym.llm.time_limit.time_limit` scopes, never ``asyncio.wait_for``, which on
Python 3.11 drops a cancellation that lands as a read finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from functools import cache
from urllib.parse import urlsplit

import h11

from airline_gym.llm.http_reply import ProtocolFailure, ReplyReader, seconds_left
from airline_gym.llm.time_limit import time_limit

__all__ = ["SENT_HOOKS", "ProtocolFailure", "post"]

#: Called right after each request's bytes are handed to the socket, with whether the
#: connection was opened for it: the benchmark's clock for how long a ready request waited.
SENT_HOOKS: list[Callable[[bool], None]] = []

_READ_SIZE = 1 << 16
Key = tuple[str, str, int]


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(h11.CLIENT)
        self.exchanges = 0

    def usable(self) -> bool:
        return not self.writer.transport.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.transport.abort()  # no lingering half-read exchange on a reused socket


class _Pool:
    """Idle connections of one event loop, closed when that loop shuts down."""

    def __init__(self) -> None:
        self.idle: dict[Key, list[_Connection]] = {}
        self._closer = self._close_at_shutdown()

    async def start(self) -> None:
        await self._closer.__anext__()

    async def _close_at_shutdown(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            for conns in self.idle.values():
                for conn in conns:
                    conn.close()
            self.idle.clear()

    def take(self, key: Key) -> _Connection | None:
        conns = self.idle.get(key)
        while conns:
            conn = conns.pop()
            if conn.usable():
                return conn
            conn.close()
        return None


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = weakref.WeakKeyDictionary()


async def _pool() -> _Pool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = _Pool()
        await pool.start()
    return pool


@cache
def _ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context()


@cache
def _target(url: str) -> tuple[Key, str, str]:
    """((scheme, host, port), Host header, path) of ``url``."""
    parts = urlsplit(url)
    scheme, host = parts.scheme or "http", parts.hostname or "localhost"
    port = parts.port or (443 if scheme == "https" else 80)
    return (scheme, host, port), parts.netloc or host, parts.path or "/"


async def _connect(key: Key, deadline: float | None) -> _Connection:
    scheme, host, port = key
    tls = _ssl_context() if scheme == "https" else None
    async with time_limit(seconds_left(deadline)):  # before the coroutine exists
        reader, writer = await asyncio.open_connection(host, port, ssl=tls, limit=_READ_SIZE)
    return _Connection(reader, writer)


async def _exchange(
    conn: _Connection, request: h11.Request, data: bytes, deadline: float | None
) -> tuple[int, bytes, dict[str, str]]:
    conn.writer.write(conn.h11.send(request) + conn.h11.send(h11.Data(data=data)))
    conn.writer.write(conn.h11.send(h11.EndOfMessage()))
    for hook in SENT_HOOKS:
        hook(conn.exchanges == 0)
    conn.exchanges += 1
    reply = ReplyReader(conn.h11)
    complete = reply.advance()
    while not complete:  # b"" at the end of the stream: h11 decides what it means
        async with time_limit(seconds_left(deadline)):  # before the read's coroutine exists
            received = await conn.reader.read(_READ_SIZE)
        complete = reply.feed(received)
    return reply.status, reply.body, reply.headers


async def post(
    url: str, data: bytes, headers: Mapping[str, str], timeout: float | None
) -> tuple[int, bytes, dict[str, str]]:
    """POST ``data`` to ``url``: (status, body, headers). ``timeout`` bounds the whole request."""
    deadline = None if timeout is None else time.monotonic() + timeout
    key, host, path = _target(url)
    pool = await _pool()
    conn = pool.take(key) or await _connect(key, deadline)
    fields = [("Host", host), ("Content-Length", str(len(data))), *headers.items()]
    request = h11.Request(method="POST", target=path, headers=fields)
    try:
        answer = await _exchange(conn, request, data, deadline)
    except BaseException:
        conn.close()  # failed, given up or cancelled: never reused
        raise
    if conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE:
        conn.h11.start_next_cycle()
        pool.idle.setdefault(key, []).append(conn)
    else:  # e.g. a close-delimited reply: the connection ends with it
        with contextlib.suppress(Exception):
            conn.close()
    return answer
