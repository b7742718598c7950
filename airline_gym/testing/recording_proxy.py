"""A recording proxy on 127.0.0.1 in front of an OpenAI-compatible server: what a client sends,
kept (``requests``: the JSON bodies of its POSTs), and the server's answers passed back unchanged.

Stdlib only. For tests that need both a real model server and the exact request bodies (the
training pipeline test: the tools and system prompt eval sends are the ones the model was
trained on)::

    with RecordingProxy("http://127.0.0.1:8000/v1") as proxy:
        ...  # point the client at proxy.base_url
    proxy.requests[0]["tools"]
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["RecordingProxy"]

_TIMEOUT_S = 600.0
_MAX_BODY = 64 * 1024 * 1024


class RecordingProxy:
    """Forwards ``/v1/...`` to ``upstream`` (an API base ending in ``/v1``); a context manager."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    def __enter__(self) -> RecordingProxy:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.proxy = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _record(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except ValueError:
            data = {"unparsed": body.decode("utf-8", "replace")}
        with self._lock:
            self.requests.append(data)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _forward(self, body: bytes | None) -> None:
        proxy: RecordingProxy = self.server.proxy  # type: ignore[attr-defined]
        path = self.path[len("/v1") :] if self.path.startswith("/v1") else self.path
        request = urllib.request.Request(
            proxy.upstream + path,
            data=body,
            method=self.command,
            headers={"content-type": self.headers.get("content-type", "application/json")},
        )
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as reply:
                status, payload = reply.status, reply.read(_MAX_BODY)
                kind = reply.headers.get("content-type", "application/json")
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read(_MAX_BODY)
            kind = error.headers.get("content-type", "application/json")
            error.close()
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        length = min(int(self.headers.get("content-length") or 0), _MAX_BODY)
        body = self.rfile.read(length)
        self.server.proxy._record(body)  # type: ignore[attr-defined]
        self._forward(body)
