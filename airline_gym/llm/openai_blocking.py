"""The direct path for blocking calls: ``http.client`` in the calling thread, keep-alive per thread.

No event loop and no thread hand-off (measured: 1.2 ms of CPU per request against 2.4 ms when a
blocking call waits on the shared loop). ``timeout`` bounds the whole request: before every read
the socket's timeout is set to what is left, so a server that drips bytes cannot hold a call;
a request that fails or is given up on closes its connection. An idle connection the server
has closed is noticed before it is used (as urllib3 does), so nothing is ever sent twice.
"""

from __future__ import annotations

import http.client
import select
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from airline_gym.llm.wire import decode_reply, encode_body, request_headers

__all__ = ["post_chat_blocking"]

_local = threading.local()


def _connections() -> dict[tuple[str, str, int], http.client.HTTPConnection]:
    conns: dict[tuple[str, str, int], http.client.HTTPConnection] | None = getattr(
        _local, "conns", None
    )
    if conns is None:
        conns = _local.conns = {}
    return conns


def _left(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("no complete response within the request timeout")
    return left


def _bound(conn: http.client.HTTPConnection, deadline: float | None) -> None:
    if conn.sock is not None:
        conn.sock.settimeout(_left(deadline))


def _exchange(
    conn: http.client.HTTPConnection,
    path: str,
    data: bytes,
    headers: dict[str, str],
    deadline: float | None,
) -> tuple[int, bytes, dict[str, str]]:
    conn.timeout = _left(deadline)  # connecting
    conn.request("POST", path, body=data, headers=headers)
    _bound(conn, deadline)
    response = conn.getresponse()
    chunks = []
    while True:
        _bound(conn, deadline)
        chunk = response.read1(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    response.close()  # done with this response; the connection stays open for the next
    if response.will_close:
        conn.close()
    return response.status, b"".join(chunks), dict(response.getheaders())


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle keep-alive connection was closed by the server (readable = EOF)."""
    if conn.sock is None:
        return True
    try:
        return bool(select.select([conn.sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _send(
    scheme: str,
    host: str,
    port: int,
    path: str,
    data: bytes,
    headers: dict[str, str],
    deadline: float | None,
) -> tuple[int, bytes, dict[str, str]]:
    """One exchange; only connections that finished an exchange cleanly are kept for reuse."""
    conns = _connections()
    key = (scheme, host, port)
    conn = conns.pop(key, None)
    if conn is not None and _dropped(conn):
        conn.close()
        conn = None
    if conn is None:
        kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        conn = kind(host, port)
    try:
        answer = _exchange(conn, path, data, headers, deadline)
    except BaseException:
        conn.close()  # failed, given up (timeout) or interrupted: never reused
        raise
    if conn.sock is not None:
        conns[key] = conn
    return answer


def post_chat_blocking(
    api_base: str, api_key: str | None, body: dict[str, Any], timeout: float | None
) -> dict[str, Any]:
    """POST ``body`` to ``{api_base}/chat/completions`` from this thread; the decoded reply."""
    url = urlsplit(api_base)
    host = url.hostname or "localhost"
    port = url.port or (443 if url.scheme == "https" else 80)
    path = url.path.rstrip("/") + "/chat/completions"
    data = encode_body(body)
    deadline = None if timeout is None else time.monotonic() + timeout
    headers = request_headers(api_key)
    status, content, reply_headers = _send(url.scheme, host, port, path, data, headers, deadline)
    return decode_reply(status, content, reply_headers)
