"""How ``airline-gym serve`` bounds what one client's message costs everyone else.

- :func:`decode_json`: a message's JSON, decoded so that other threads (the event loop serving
  ``/health`` and the other sessions) keep getting the interpreter lock meanwhile. CPython's C
  decoder holds the lock from the first byte to the last (35 ms of CPU per MB of ``0,0,...``,
  whichever thread runs it); above :data:`C_DECODER_BYTES` the standard library's own
  pure-Python scanner is used instead, which hands the lock over every switch interval (5 ms).
  It costs the sender's own thread more on such values (580 ms per MB), and the same on text:
  strings are still scanned by the C function (1 ms per MB).
  NaN and Infinity, which Python's json accepts and JSON does not have, are refused as a decode
  error (:func:`refuse_constant`): FastAPI answers 422, a WebSocket frame gets an error reply.
- :class:`BodySizeLimit`: an HTTP request whose body is over the limit gets 413 and a one-line
  JSON error, before any of it is decoded.
- :func:`oversize_reason`: the one line a WebSocket closed for an oversize frame (1009) is given.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, NoReturn

__all__ = [
    "C_DECODER_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "BodySizeLimit",
    "decode_json",
    "oversize_reason",
    "refuse_constant",
    "utf8_size",
]

#: The default frame and body limit (``--max-message-bytes``): 1 MiB. The largest of the 9,253
#: messages in the shared tau2 runs is 17 kB (an assistant message: 11.5 kB); an action carrying
#: a model's 32k-token reply is about 130 kB.
DEFAULT_MAX_MESSAGE_BYTES = 1 << 20
#: Messages up to this size (every message in the shared runs) are decoded by the C decoder:
#: at most about 0.8 ms of CPU holding the lock.
C_DECODER_BYTES = 16 << 10

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def refuse_constant(name: str) -> NoReturn:
    """json's ``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are a decode error."""
    raise json.JSONDecodeError(f"{name} is not a JSON number (NaN and Infinity are refused)", "", 0)


def _python_decoder() -> json.JSONDecoder:
    """json's decoder with its pure-Python scanner (strings still scanned by the C function)."""
    decoder = json.JSONDecoder(parse_constant=refuse_constant)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder


_PYTHON_DECODER = _python_decoder()


def decode_json(text: str) -> Any:
    """``json.loads(text)`` without NaN and Infinity; a large ``text`` without holding the
    interpreter lock throughout."""
    if len(text) <= C_DECODER_BYTES:
        return json.loads(text, parse_constant=refuse_constant)
    return _PYTHON_DECODER.decode(text)


def utf8_size(text: str) -> int:
    """The size of ``text`` in UTF-8 (what a WebSocket text frame carries), in bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def oversize_reason(what: str, size: int | None, limit: int) -> str:
    """One line: ``what`` of ``size`` bytes is over ``limit``."""
    of = f" of {size} bytes" if size is not None else ""
    return f"{what}{of} is over this server's limit of {limit} bytes (--max-message-bytes)"


class BodySizeLimit:
    """ASGI middleware: an HTTP body over ``max_bytes`` gets 413 before the app sees it.

    A declared ``Content-Length`` over the limit is refused without reading the body; a body
    without one (chunked) is read up to the limit, then refused or handed to the app whole.
    """

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send, int(declared))
            return
        if declared is not None:  # within the limit: the server stops at the declared length
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.max_bytes:
                await self._refuse(send, None)
                return
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _refuse(self, send: Send, size: int | None) -> None:
        body = json.dumps({"detail": oversize_reason("request body", size, self.max_bytes)})
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` first, then whatever ``receive`` gives."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay
