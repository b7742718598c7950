"""Does one client's large WebSocket frame stall ``/health`` or another session's step?

``python -m airline_gym.testing.bench_frames [--sizes 64k,640k,4M,16M] [--burners N]`` starts
``airline-gym serve`` as a process of its own (its own interpreter lock) on 127.0.0.1, then, for
each size, measures for ``--seconds``:

- ``GET /health``'s latency, polled every 20 ms by one client;
- a second WebSocket session's step latency (a ``get_user_details`` tool call, one at a time);

first with no large frames (the baseline), then while a third session sends frames of that size
back to back (each waits for its reply). A frame is a JSON object whose ``data`` is a list of
``0``s (the most Python objects per byte: the costliest shape to decode) and whose ``type`` is
unknown, so the server's only work on it is receiving, decoding and refusing it (``--http``:
the same JSON as ``POST /reset`` bodies, refused for the unknown key). ``--burners N``
adds N busy processes (load); the load average is printed with each row. Needs the openenv extra.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["Row", "frame_of", "main", "measure"]

STEP = {
    "type": "step",
    "data": {
        "message": {
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "get_user_details",
                        "arguments": {"user_id": "mia_li_3668"},
                    },
                }
            ]
        }
    },
}
UNITS = {"k": 1_000, "M": 1_000_000}


def size_of(text: str) -> int:
    """``64k`` -> 64,000; ``16M`` -> 16,000,000; ``1234`` -> 1,234."""
    scale = UNITS.get(text[-1], 1)
    return int(float(text[:-1] if text[-1] in UNITS else text) * scale)


def frame_of(size: int) -> str:
    """A JSON object of ``size`` bytes: an unknown ``type`` and a list of ``0``s."""
    head, tail = '{"type": "pad", "data": [0', "]}"
    zeros = max(0, (size - len(head) - len(tail)) // 2)
    text = head + ",0" * zeros + tail
    return text + " " * (size - len(text))


@dataclass
class Row:
    """One phase's latencies (seconds) and the load average while it ran."""

    label: str
    health: list[float] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)
    frames: list[float] = field(default_factory=list)
    load: float = 0.0

    def line(self) -> str:
        """The row as printed: milliseconds, then the load average."""
        mean = statistics.mean(self.frames) if self.frames else 0.0
        frames = f"{len(self.frames):4d} x {_ms(mean):5.0f}" if self.frames else "-"
        return (
            f"{self.label:>9} {_stats(self.health)} | {_stats(self.steps)} | "
            f"{frames:>12} | {self.load:5.1f}"
        )


def _ms(seconds: float) -> float:
    return 1e3 * seconds


def _stats(values: list[float]) -> str:
    """p50, p99 and max in ms."""
    if not values:
        return f"{'-':>23}"
    p99 = statistics.quantiles(values, n=100, method="inclusive")[98] if values[1:] else values[0]
    return f"{_ms(statistics.median(values)):7.1f} {_ms(p99):7.1f} {_ms(max(values)):7.1f}"


HEADER = (
    "    frame   /health ms p50     p99     max |  step ms p50     p99     max "
    "|  frames x ms | load"
)


@contextlib.contextmanager
def server(*options: str) -> Iterator[str]:
    """``airline-gym serve --port 0 OPTIONS`` as a process; yields its URL, then stops it."""
    program = "import sys; from airline_gym.cli.main import main; sys.exit(main())"
    command = [sys.executable, "-c", program, "serve", "--port", "0", *options]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, env=env)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        if not line:
            raise SystemExit(f"the server did not start (exit {process.wait()})")
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=60)


@contextlib.contextmanager
def burners(count: int) -> Iterator[None]:
    """``count`` busy processes (each spins one core) for the block."""
    spin = [sys.executable, "-c", "while True: pass"]
    processes = [subprocess.Popen(spin) for _ in range(count)]
    try:
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


def _session(url: str) -> object:
    from websockets.sync.client import connect

    return connect(url.replace("http://", "ws://") + "/ws", max_size=None).__enter__()


def _ask(ws: object, text: str) -> dict[str, object]:
    ws.send(text)  # type: ignore[attr-defined]
    return json.loads(ws.recv(timeout=300))  # type: ignore[attr-defined,no-any-return]


def _until(stop: threading.Event, action: Callable[[], None], pause: float = 0.0) -> None:
    while not stop.is_set():
        action()
        if pause:
            time.sleep(pause)


def _post(url: str, body: bytes) -> None:
    """POST ``body`` as JSON; any status (a refusal is the expected answer)."""
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    try:
        urllib.request.urlopen(request, timeout=300).read()
    except urllib.error.HTTPError as exc:
        exc.read()


def measure(url: str, size: int, seconds: float, over_http: bool = False) -> Row:
    """One phase: probes for ``seconds`` while frames of ``size`` bytes are sent (0: none).

    ``over_http``: the same JSON is sent as ``POST /reset`` bodies instead of WebSocket frames.
    """
    row = Row(f"{size / 1e6:g} MB" if size else "none")
    prober, sender = _session(url), _session(url) if size and not over_http else None
    reset = json.dumps({"type": "reset", "data": {"task": "17", "seed": 0}})
    _ask(prober, reset)
    step, frame = json.dumps(STEP), frame_of(size)
    steps_in_episode = [0]
    stop = threading.Event()

    def timed(into: list[float], action: Callable[[], object]) -> None:
        start = time.perf_counter()
        action()
        into.append(time.perf_counter() - start)

    def probe_step() -> None:
        if steps_in_episode[0] >= 150:  # the step budget is 200: start a new episode untimed
            _ask(prober, reset)
            steps_in_episode[0] = 0
        timed(row.steps, lambda: _ask(prober, step))
        steps_in_episode[0] += 1

    def health() -> None:
        timed(row.health, lambda: urllib.request.urlopen(url + "/health", timeout=300).read())

    def send() -> None:
        timed(row.frames, lambda: _ask(sender, frame))

    def post() -> None:
        timed(row.frames, lambda: _post(url + "/reset", frame.encode()))

    workers = [
        threading.Thread(target=_until, args=(stop, probe_step, 0.01)),
        threading.Thread(target=_until, args=(stop, health, 0.02)),
    ]
    if size:
        sending = post if over_http else send
        workers.append(threading.Thread(target=_until, args=(stop, sending)))
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    row.load = os.getloadavg()[0]
    for ws in (prober, sender):
        if ws is not None:
            ws.close()  # type: ignore[attr-defined]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64k,640k,4M,16M", help="frame sizes (k, M: 10^3, 10^6)")
    parser.add_argument("--seconds", type=float, default=6.0, help="each phase's length")
    parser.add_argument("--burners", type=int, default=0, help="busy processes added as load")
    parser.add_argument("--http", action="store_true", help="send POST /reset bodies, not frames")
    parser.add_argument("serve_options", nargs="*", help="options for airline-gym serve (after --)")
    args = parser.parse_args(argv)
    sizes = [size_of(size) for size in args.sizes.split(",")]
    with server(*args.serve_options) as url, burners(args.burners):
        print(f"server {url}; {args.burners} burner(s); {os.cpu_count()} cores\n{HEADER}")
        for size in [0, *sizes]:
            print(measure(url, size, args.seconds, args.http).line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
