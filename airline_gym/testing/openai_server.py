"""A scriptable, local OpenAI-compatible HTTP server for offline tests and demos.

Stdlib only. Each ``POST /v1/chat/completions`` consumes one scripted :class:`Reply`
(or asks a callable for one) and answers with a real ``chat.completion`` JSON body, or
with a scripted fault (hang, HTTP error, dropped connection, empty/garbage body...).

Example::

    with OpenAIServer([Reply("Hello!"), Reply(fault="500"), Reply("again")]) as server:
        litellm.completion(model="openai/scripted", api_base=server.base_url,
                           api_key="sk-test", messages=[...])
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from airline_gym.testing.openai_reply import FAULTS, Reply, completion_body, is_status

__all__ = ["FAULTS", "OpenAIServer", "Reply", "completion_body"]

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_denied", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}


ReplySource = Iterable[Reply] | Callable[[dict[str, Any]], Reply] | None


class OpenAIServer:
    """Local OpenAI-compatible server on ``127.0.0.1``; use as a context manager.

    ``replies`` is an iterable of :class:`Reply` consumed in order, or a callable mapping the
    request body to a :class:`Reply`. When the script runs out, ``default`` is used; without a
    default the server answers HTTP 500 saying the script is exhausted.
    """

    def __init__(self, replies: ReplySource = None, default: Reply | None = None) -> None:
        self._lock = threading.Lock()
        self._script: collections.deque[Reply] = collections.deque()
        self._responder: Callable[[dict[str, Any]], Reply] | None = None
        if callable(replies):
            self._responder = replies
        elif replies is not None:
            self._script.extend(replies)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        """Bind a free port and serve in a daemon thread; returns ``self``."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        port = httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"OpenAIServer:{port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving promptly, releasing hanging handlers and closing open connections."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            _hard_close(conn)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- script ----------------------------------------------------------------------------

    def push(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(replies)

    @property
    def remaining(self) -> int:
        """Number of scripted replies not yet consumed."""
        with self._lock:
            return len(self._script)

    def _record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def _next_reply(self, body: dict[str, Any]) -> Reply | None:
        if self._responder is not None:
            return self._responder(body)
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.default

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the default backlog (5) stalls bursts of concurrent clients by ~1 s
    owner: OpenAIServer


def _hard_close(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        conn.close()


def _rough_tokens(obj: Any) -> int:
    """A deterministic token estimate (whitespace words of the JSON text)."""
    if obj is None:
        return 0
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return len(text.split())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "airline-gym-openai/0.1"

    @property
    def owner(self) -> OpenAIServer:
        assert isinstance(self.server, _Server)
        return self.server.owner

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner._connections.add(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        with self.owner._lock:
            self.owner._connections.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging."""

    # -- helpers ---------------------------------------------------------------------------

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _send_error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        err_type, code = _ERROR_TYPES.get(status, ("server_error", None))
        body = {"error": {"message": message, "type": err_type, "param": None, "code": code}}
        self._send_json(status, body, headers)

    def _drop(self) -> None:
        self.close_connection = True
        _hard_close(self.connection)

    # -- endpoints -------------------------------------------------------------------------

    def do_GET(self) -> None:
        """``GET /v1/models``."""
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": "scripted", "object": "model", "created": 0, "owned_by": "airline-gym"}]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_error(404, f"no route for GET {self.path}")

    def do_POST(self) -> None:
        """``POST /v1/chat/completions``."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error(404, f"no route for POST {self.path}")
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_error(400, "request body is not valid JSON")
            return
        owner = self.owner
        owner._record(body)
        try:
            reply = owner._next_reply(body)
        except Exception as exc:  # a failing responder callable must not kill the server
            self._send_error(500, f"scripted responder raised {type(exc).__name__}: {exc}")
            return
        if reply is None:
            self._send_error(
                500, "OpenAIServer script exhausted: no scripted reply left and no default set"
            )
            return
        self._answer(body, reply)

    def _answer(self, body: dict[str, Any], reply: Reply) -> None:
        fault = reply.fault
        if reply.delay > 0:
            self.owner._stopping.wait(reply.delay)
        if fault == "hang":
            self.owner._stopping.wait(reply.hang_seconds)
            self._drop()
            return
        if fault == "drop":
            self._drop()
            return
        if fault == "drip":
            self._drip(reply.hang_seconds, reply.drip_interval)
            return
        if fault == "garbage":
            self._send(200, b"<html>this is not JSON {", content_type="application/json")
            return
        if fault is not None and is_status(fault):
            status = int(fault)
            headers = {}
            if status == 429 and reply.retry_after is not None:
                headers["Retry-After"] = reply.retry_after
            self._send_error(status, f"scripted fault: HTTP {status}", headers)
            return

        content = reply.content
        tool_calls: list[dict[str, Any]] = []
        if fault == "empty":
            content = None
        elif fault == "bad_json":
            tool_calls = [self._tool_call({"name": "broken", "arguments": '{"oops": '})]
        else:
            tool_calls = [self._tool_call(tc) for tc in reply.tool_calls or []]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        usage = {
            "prompt_tokens": _rough_tokens(body.get("messages")),
            "completion_tokens": _rough_tokens(content) + _rough_tokens(tool_calls or None),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "tool_calls" if tool_calls else "stop"
        completion_id = f"chatcmpl-scripted-{self.owner._next_id()}"
        model = str(body.get("model", "scripted"))
        if body.get("stream"):
            self._stream(completion_id, model, message, finish, usage, body)
            return
        self._send_json(200, completion_body(completion_id, model, message, usage))

    def _drip(self, seconds: float, interval: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self.wfile.flush()
        end = time.monotonic() + seconds
        with contextlib.suppress(OSError):
            while time.monotonic() < end and not self.owner._stopping.wait(interval):
                self.wfile.write(b" ")
                self.wfile.flush()
        self._drop()

    def _tool_call(self, spec: dict[str, Any]) -> dict[str, Any]:
        args = spec.get("arguments", {})
        return {
            "id": spec.get("id") or f"call_{self.owner._next_id():06d}",
            "type": "function",
            "function": {
                "name": spec["name"],
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }

    def _stream(
        self,
        completion_id: str,
        model: str,
        message: dict[str, Any],
        finish: str,
        usage: dict[str, int],
        body: dict[str, Any],
    ) -> None:
        """Minimal SSE streaming: role, content, tool calls, finish, optional usage, [DONE]."""
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        if message.get("content"):
            events.append(chunk({"content": message["content"]}))
        for i, tc in enumerate(message.get("tool_calls", [])):
            events.append(chunk({"tool_calls": [{"index": i, **tc}]}))
        events.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**chunk({}), "choices": [], "usage": usage})
        payload = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
        payload += b"data: [DONE]\n\n"
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
