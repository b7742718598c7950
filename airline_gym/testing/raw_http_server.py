"""A raw-socket HTTP server on 127.0.0.1 for faults a well-behaved server cannot make.

Each connection's request head is read, then the socket goes to ``handle(conn)``, which writes
whatever bytes it likes: a dripped status line, a lying ``Content-Length``, a 2^63 chunk, a
close-delimited body. The server stops by itself after ``lifetime`` seconds and counts the
connections and the bytes its handlers sent (:meth:`RawServer.send`).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable

__all__ = ["RawServer", "read_request_head"]


def read_request_head(conn: socket.socket) -> bool:
    """Read up to the end of a request's head (the small bodies of tests come with it);
    False if the client closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    return True


class RawServer:
    """Accepts connections on 127.0.0.1 and hands each to ``handle(conn)``; stops by itself."""

    def __init__(self, handle: Callable[[socket.socket], None], lifetime: float = 30.0) -> None:
        self.handle = handle
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.connections = 0
        self.sent = 0  # bytes sent through :meth:`send`
        self.deadline = time.monotonic() + lifetime

    def send(self, conn: socket.socket, data: bytes) -> None:
        """``conn.sendall(data)``, counted; raises OSError once the client has gone."""
        if self.stop.is_set() or time.monotonic() > self.deadline:
            raise ConnectionAbortedError("the raw server is stopping")
        conn.sendall(data)
        self.sent += len(data)

    def _serve(self) -> None:
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(5)
            if read_request_head(conn):
                self.handle(conn)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                conn.close()

    def __enter__(self) -> RawServer:
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.sock.close()
