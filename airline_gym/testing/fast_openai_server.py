"""A fast scripted OpenAI-compatible server for benchmarks: asyncio, HTTP/1.1 keep-alive.

Where :class:`~airline_gym.testing.openai_server.OpenAIServer` plays every fault a test needs,
this one is built to answer thousands of requests per second so that what a benchmark measures
is the client. ``responder(body) -> Reply`` picks each answer (only content and tool calls are
used). Run in a thread (``with FastOpenAIServer(responder) as server``) or, so that its CPU is
not the client's, as a process::

    python -m airline_gym.testing.fast_openai_server --responder MODULE:FUNCTION

which prints one JSON line ``{"base_url": ...}`` and serves until stdin closes. ``GET /_stats``
returns the request count, the first and last arrival (``time.monotonic()``, comparable across
processes on Linux) and, after ``POST /_watch {"pid": N}``, process N's CPU seconds at the first
and the last request. A responder may define ``arrived(body, t)`` and ``replied(body, t)``
(called as each request arrives and its reply is sent) and ``report()``/``reset()`` (served as
``GET``/``POST /_responder``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import itertools
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from airline_gym.testing.openai_reply import Reply, completion_body

__all__ = ["FastOpenAIServer", "Stats", "process_cpu_seconds"]

Responder = Callable[[dict[str, Any]], Reply]
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """CPU seconds of process ``pid``: its live threads' run time (``schedstat``, in ns), else
    user + system time in clock ticks (10 ms) from ``/proc/PID/stat``."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as stat:
                    total += int(stat.read().split()[0])
            except OSError:  # the thread ended meanwhile
                continue
        if total:
            return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK  # utime, stime


class Stats:
    """What the server saw: request count, arrival times, the watched process's CPU."""

    def __init__(self) -> None:
        self.requests = 0
        self.first: float | None = None
        self.last: float | None = None
        self.watch_pid: int | None = None
        self.cpu_first: float | None = None
        self.cpu_last: float | None = None
        self.cpu_marks: list[float] = []  # the watched process's CPU as each reply is made

    def arrived(self, now: float) -> None:
        self.requests += 1
        if self.first is None:
            self.first = now
            self.cpu_first = self._cpu()
        self.last = now

    def answered(self) -> None:
        self.cpu_last = self._cpu()
        if self.cpu_last is not None:
            self.cpu_marks.append(self.cpu_last)

    def _cpu(self) -> float | None:
        return None if self.watch_pid is None else process_cpu_seconds(self.watch_pid)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


class FastOpenAIServer:
    """``POST /v1/chat/completions`` answered by ``responder``; a context manager."""

    def __init__(
        self,
        responder: Responder,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        jitter: float = 0.0,
    ) -> None:
        self.responder = responder
        self.latency = latency  # seconds before each reply (a model's decoding time)
        self.jitter = jitter  # each delay is latency * uniform(1 - jitter, 1 + jitter)
        self._delays = random.Random(0)  # seeded: the same delays run after run
        self.host, self.port = host, port
        self.stats = Stats()
        self.base_url = ""
        self._ids = itertools.count(1)
        # optional responder hooks: arrived(body, t) and replied(body, t), t = time.monotonic()
        self._arrived = getattr(responder, "arrived", None)
        self._replied = getattr(responder, "replied", None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    async def serve(self) -> asyncio.Server:
        """Bind and start serving on the running loop."""
        self._server = await asyncio.start_server(self._client, self.host, self.port, backlog=4096)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://{self.host}:{port}/v1"
        return self._server

    def start(self) -> FastOpenAIServer:
        """Serve in a daemon thread with its own event loop."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.serve())
            ready.set()
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="FastOpenAIServer", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop serving and close every connection."""
        loop, self._loop = self._loop, None
        if loop is None:
            return

        async def close() -> None:
            if self._server is not None:
                self._server.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._server.wait_closed(), 2)
            loop.stop()

        asyncio.run_coroutine_threadsafe(close(), loop)
        if self._thread is not None:
            self._thread.join(5)
        loop.close()

    def __enter__(self) -> FastOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- HTTP ------------------------------------------------------------------------------

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                raw = await reader.readexactly(length) if length else b""
                status, payload, body = self._handle(head.split(b" ", 2), raw)
                if body is not None and self.latency > 0:
                    spread = self._delays.uniform(1 - self.jitter, 1 + self.jitter)
                    await asyncio.sleep(self.latency * spread)
                writer.write(
                    b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n"
                    % (status, b"OK" if status == 200 else b"Error", len(payload))
                    + payload
                )
                if body is not None and self._replied is not None:
                    self._replied(body, time.monotonic())
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # the server is shutting down
            pass
        finally:
            writer.close()

    def _handle(
        self, request_line: list[bytes], raw: bytes
    ) -> tuple[int, bytes, dict[str, Any] | None]:
        method, path = request_line[0], request_line[1].split(b"?")[0].rstrip(b"/")
        if method == b"GET" and path == b"/_stats":
            return 200, json.dumps(self.stats.to_dict()).encode(), None
        if method == b"POST" and path == b"/_watch":
            self.stats.watch_pid = int(json.loads(raw)["pid"])
            return 200, b"{}", None
        if path == b"/_responder":  # GET: the responder's report(); POST: its reset()
            hook = getattr(self.responder, "report" if method == b"GET" else "reset", None)
            return 200, json.dumps(hook() if hook else {}).encode(), None
        if method != b"POST" or not path.endswith(b"/chat/completions"):
            missing = b'{"error": {"message": "no such route", "type": "invalid_request_error"}}'
            return 404, missing, None
        arrival = time.monotonic()
        self.stats.arrived(arrival)
        try:
            body = json.loads(raw)
            if self._arrived is not None:
                self._arrived(body, arrival)
            reply = self.responder(body)
        except Exception as exc:  # a broken script must not kill the server
            error = {"message": f"responder failed: {exc!r}", "type": "server_error"}
            return 500, json.dumps({"error": error}).encode(), None
        payload = self._completion(body, reply, arrival, len(raw))
        self.stats.answered()
        return 200, payload, body

    def _completion(self, body: dict[str, Any], reply: Reply, arrival: float, size: int) -> bytes:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": spec.get("id") or f"call_{next(self._ids):06d}",
                    "type": "function",
                    "function": {
                        "name": spec["name"],
                        "arguments": spec["arguments"]
                        if isinstance(spec.get("arguments"), str)
                        else json.dumps(spec.get("arguments", {})),
                    },
                }
                for spec in reply.tool_calls
            ]
        completion_tokens = len((reply.content or "").split()) + 10 * len(reply.tool_calls or [])
        usage = {
            "prompt_tokens": size // 4,
            "completion_tokens": completion_tokens,
            "total_tokens": size // 4 + completion_tokens,
        }
        out = completion_body(
            f"chatcmpl-fast-{next(self._ids)}", str(body.get("model", "")), message, usage
        )
        out["arrival"] = arrival  # lets a benchmark measure ready -> received
        return json.dumps(out).encode()


def _load(spec: str) -> Responder:
    module, _, name = spec.partition(":")
    responder = getattr(importlib.import_module(module), name)
    return responder() if isinstance(responder, type) else responder  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    """Serve until stdin closes (run as a child process by a benchmark)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responder", required=True, help="MODULE:FUNCTION (or a class)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--jitter", type=float, default=0.0, help="spread of the latency (0-1)")
    args = parser.parse_args(argv)
    server = FastOpenAIServer(
        _load(args.responder), port=args.port, latency=args.latency, jitter=args.jitter
    )

    async def run() -> None:
        await server.serve()
        print(json.dumps({"base_url": server.base_url, "pid": os.getpid()}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
