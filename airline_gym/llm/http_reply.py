"""Reading one HTTP/1.1 reply with h11, the same way on the async and the blocking direct paths.

Sans-IO: the caller reads bytes from its socket (with what is left of its deadline) and feeds
them to :meth:`ReplyReader.feed`, ``b""`` for the end of the stream, which h11 needs to end a
close-delimited (HTTP/1.0-style) reply and to notice a body cut short of its Content-Length.
The body is capped at :data:`MAX_REPLY_BYTES`: a larger ``Content-Length`` fails as soon as the
headers are read, a chunked or close-delimited body as soon as it grows past the cap, so a
hostile or broken server cannot make the client buffer without end.
"""

from __future__ import annotations

import http.client
import time

import h11

from airline_gym.llm.errors import ReplyTooLarge

__all__ = ["MAX_REPLY_BYTES", "ProtocolFailure", "ReplyReader", "seconds_left"]

#: The largest reply body accepted (64 MiB; a long chat completion is tens of kilobytes).
MAX_REPLY_BYTES = 64 * 1024 * 1024


def seconds_left(deadline: float | None) -> float | None:
    """Seconds left before ``deadline`` (monotonic; None: no limit); TimeoutError once past."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("no complete response within the request timeout")
    return left


class ProtocolFailure(http.client.HTTPException):
    """The server's answer is not valid HTTP/1.1 (classified as a transport error)."""


class ReplyReader:
    """Collects the status, headers and body of the reply on ``conn``, body capped at ``limit``."""

    def __init__(self, conn: h11.Connection, limit: int = MAX_REPLY_BYTES) -> None:
        self.conn, self.limit = conn, limit
        self.status = 0
        self.headers: dict[str, str] = {}
        self._chunks: list[bytes] = []
        self._size = 0

    @property
    def body(self) -> bytes:
        return b"".join(self._chunks)

    def advance(self) -> bool:
        """Read what h11 has buffered already; whether the reply is complete (see :meth:`feed`)."""
        return self.feed(None)

    def feed(self, data: bytes | None) -> bool:
        """Hand ``data`` (``b""``: the server closed) to h11; whether the reply is complete.

        Raises :class:`ProtocolFailure` for invalid HTTP (a body shorter than its
        Content-Length included), :class:`ReplyTooLarge` past the cap and
        ``ConnectionError`` when the stream ends before a reply began.
        """
        try:
            if data is not None:
                self.conn.receive_data(data)
            return self._advance()
        except h11.ProtocolError as exc:
            raise ProtocolFailure(f"not a valid HTTP/1.1 reply: {exc}") from None

    def _advance(self) -> bool:
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                return False
            if isinstance(event, h11.Response):
                self._start(event)
            elif isinstance(event, h11.Data):
                self._size += len(event.data)
                if self._size > self.limit:
                    raise ReplyTooLarge(f"the reply body exceeds {self._limit_text()}")
                self._chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                return True
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("the server closed the connection before a full reply")

    def _start(self, response: h11.Response) -> None:
        self.status = response.status_code
        self.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in response.headers}
        length = self.headers.get("content-length")  # h11 has checked it is one number
        if length is not None and int(length) > self.limit:
            raise ReplyTooLarge(
                f"the reply's Content-Length ({int(length):,} bytes) exceeds {self._limit_text()}"
            )

    def _limit_text(self) -> str:
        return f"the {self.limit / 2**20:g} MiB cap on a reply ({self.limit:,} bytes)"
