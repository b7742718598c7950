"""HTTP JSON bodies decoded off the event loop, for ``airline-gym serve``'s FastAPI routes.

FastAPI decodes a route's JSON body with ``await request.json()`` on the event loop: a large body
of small values holds ``/health`` and every session meanwhile (35 ms of CPU per MB). Routes made
with :class:`OffLoopJSONRoute` decode a body over
:data:`~airline_gym.integrations.message_limits.C_DECODER_BYTES` on a worker thread with
:func:`~airline_gym.integrations.message_limits.decode_json` (which lets other threads run);
smaller ones as before. The value, and a decode error (422), are FastAPI's as before, except that
NaN and Infinity are a decode error (422): Python's json reads them, JSON has no such numbers,
and FastAPI's reply, which quotes the input, could not be written (a 500).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from airline_gym.errors import MissingDependencyError
from airline_gym.integrations.message_limits import C_DECODER_BYTES, decode_json, refuse_constant

try:
    from fastapi import Request, Response
    from fastapi.routing import APIRoute
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError(
        "airline_gym.integrations.http_json", "fastapi", "openenv"
    ) from None

__all__ = ["OffLoopJSONRequest", "OffLoopJSONRoute"]


def _decode_body(body: bytes) -> Any:
    """``json.loads(body)``, by :func:`decode_json` (the encoding detected as json does)."""
    return decode_json(body.decode(json.detect_encoding(body), "surrogatepass"))


class OffLoopJSONRequest(Request):  # type: ignore[misc,unused-ignore]
    """A request whose large JSON body is decoded on a worker thread."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            if len(body) <= C_DECODER_BYTES:
                self._json = json.loads(body, parse_constant=refuse_constant)
            else:
                self._json = await asyncio.to_thread(_decode_body, body)
        return self._json


class OffLoopJSONRoute(APIRoute):  # type: ignore[misc,unused-ignore]
    """An ``APIRoute`` whose handler gets an :class:`OffLoopJSONRequest` (FastAPI's pattern)."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            return await handler(OffLoopJSONRequest(request.scope, request.receive))

        return route
