"""``airline-gym serve --max-message-bytes``: large frames and bodies against a real server.

An oversize WebSocket frame closes its session with code 1009 and frees its slot; an oversize
HTTP body gets 413; a large but allowed frame is decoded off the event loop, so ``/health`` and
another session's steps keep answering meanwhile. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from extras import require

require("openenv", "websockets", "uvicorn")

from openenv_servers import running, running_server, server_process  # noqa: E402
from test_openenv_hostile import RECV_TIMEOUT, Session, call, http  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

from airline_gym.cli import serve  # noqa: E402
from airline_gym.testing.bench_frames import frame_of  # noqa: E402

LIMIT = 65_536
LOOKUP = call("get_user_details", user_id="mia_li_3668")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """``airline-gym serve`` with a 64 KiB limit and room for one session only."""
    with running_server("--max-sessions", "1", "--max-message-bytes", str(LIMIT)) as url:
        yield url


@contextlib.contextmanager
def app_server(max_message_bytes: int) -> Iterator[str]:
    """``make_app(max_message_bytes=...)`` under uvicorn with uvicorn's own (16 MiB) frame limit."""
    import uvicorn

    from airline_gym.integrations.openenv_server import make_app

    app = make_app(max_sessions=1, max_message_bytes=max_message_bytes, user="scripted")
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    with running(serve.Serving(uvicorn.Server(config), serve.listen("127.0.0.1", 0))) as url:
        yield url


def closed_by_the_server(session: Session, frame: str) -> Any:
    """Send ``frame``; the close frame the server answered with."""
    with pytest.raises(ConnectionClosed) as closed:
        session.ws.send(frame)
        session.reply()
    assert closed.value.rcvd is not None, closed.value
    return closed.value.rcvd


def reset_when_free(url: str) -> dict[str, Any]:
    """A new session's first reply, once the server has a free slot (it has room for one)."""
    deadline = time.monotonic() + 30
    while True:
        with Session(url) as session:
            reply = session.ask("reset", {"task": "17", "seed": 0})
            if reply["type"] == "observation":
                assert session.ask("step", {"message": {"tool_calls": [LOOKUP]}})["type"] == (
                    "observation"
                )
                return reply
        assert reply["data"]["code"] == "CAPACITY_REACHED", reply
        assert time.monotonic() < deadline, "the closed session's slot was never freed"
        time.sleep(0.1)


def test_an_oversize_frame_closes_its_session_with_1009_and_frees_its_slot(server):
    with Session(server) as session:
        assert session.ask("reset", {"task": "17", "seed": 0})["type"] == "observation"
        at_limit = session.send(frame_of(LIMIT))  # the largest allowed: decoded and answered
        assert at_limit["data"]["code"] == "UNKNOWN_TYPE"
        close = closed_by_the_server(session, frame_of(LIMIT + 1))
    assert close.code == 1009
    assert close.reason == f"frame exceeds limit of {LIMIT} bytes"  # websockets' own words
    reset_when_free(server)  # the only slot is free again


def test_the_python_api_enforces_the_limit_in_the_app_too():
    """Under a server that reads bigger frames, ``make_app``'s own check closes with 1009."""
    reason = "of {} bytes is over this server's limit of 4096 bytes (--max-message-bytes)"
    body = {"task": "17", "pad": "x" * 4096}
    with app_server(4096) as url:
        for frame in (frame_of(4097), json.dumps({"type": "step", "data": "é" * 2100})):
            with Session(url) as session:  # the second frame: 2,129 characters, 4,229 bytes
                close = closed_by_the_server(session, frame)
            assert close.code == 1009
            assert close.reason == "message " + reason.format(len(frame.encode()))
        reset_when_free(url)
        status, refusal = http(url + "/reset", "POST", body)
    size = len(json.dumps(body).encode())
    assert (status, refusal) == (413, {"detail": "request body " + reason.format(size)})


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "1048576"])
def test_make_app_refuses_a_bad_limit_in_one_line(value):
    from airline_gym.errors import ConfigError
    from airline_gym.integrations.openenv_server import make_app

    with pytest.raises(ConfigError, match=r"^max_message_bytes must be [^\n]*$"):
        make_app(max_message_bytes=value)


def post(url: str, body: bytes | Iterator[bytes]) -> tuple[int, dict[str, Any]]:
    """POST ``body`` to ``url`` (an iterator: sent chunked, with no Content-Length)."""
    parts = urllib.parse.urlsplit(url)
    connection = HTTPConnection(parts.hostname, parts.port, timeout=RECV_TIMEOUT)
    try:
        headers = {"Content-Type": "application/json"}
        connection.request("POST", parts.path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_an_oversize_http_body_gets_413_and_the_open_session_goes_on(server):
    over = json.dumps({"task": "17", "pad": "x" * LIMIT}).encode()
    at_limit = json.dumps({"task": "17", "seed": 0}).encode().ljust(LIMIT)
    with Session(server) as session:
        assert session.ask("reset", {"task": "17", "seed": 0})["type"] == "observation"
        declared = post(server + "/reset", over)
        chunked = post(server + "/reset", iter([over[:1000], over[1000:]]))
        allowed = post(server + "/reset", iter([at_limit]))
        art_step = post(server + "/environments/any/step", over)  # ART's routes: the same limit
        bad = [post(server + "/reset", b'{"task": 17,' + pad) for pad in (b"", b" " * 20_000)]
        step = session.ask("step", {"message": {"tool_calls": [LOOKUP]}})
    reason = f"is over this server's limit of {LIMIT} bytes (--max-message-bytes)"
    assert declared == (413, {"detail": f"request body of {len(over)} bytes {reason}"})
    assert chunked == (413, {"detail": f"request body {reason}"})
    assert allowed[0] == 200 and allowed[1]["observation"]["info"]["task_id"] == "17"
    assert art_step == declared
    assert bad[0][0] == bad[1][0] == 422  # bad JSON, decoded on the loop or off it: the same
    assert bad[0][1]["detail"][0]["type"] == bad[1][1]["detail"][0]["type"] == "json_invalid"
    assert step["type"] == "observation" and step["data"]["done"] is False


def timed(into: list[float], action: Callable[[], object]) -> None:
    start = time.monotonic()
    action()
    into.append(time.monotonic() - start)


@pytest.mark.long  # ~40 s: a server process of its own and frames that take seconds to decode
def test_a_large_frame_or_body_does_not_stall_other_sessions_or_health():
    """While 3 MB frames (then HTTP bodies) are decoded, /health and another session's steps
    answer in a small fraction of a frame's time.

    Each frame is a list of 1.5 million ``0``s: the costliest JSON to decode per byte. Decoded
    on the event loop (or by CPython's C decoder on any thread: it holds the interpreter lock
    throughout), every probe sent meanwhile waits for the whole decode, so the slowest probe
    takes about as long as a frame; decoded as the server does, it takes a small fraction.
    """
    size = 3_000_000
    with server_process("--max-message-bytes", str(size)) as process:
        url = process.url
        sender, prober = Session(url), Session(url)
        reset = {"task": "17", "seed": 0}
        prober.ask("reset", reset)
        frame, steps, replies = frame_of(size), [0], []

        def probe_round(probes: list[float]) -> None:
            timed(probes, lambda: http(url + "/health"))
            if steps[0] == 100:  # within the step budget: a new episode, untimed
                prober.ask("reset", reset)
                steps[0] = 0
            timed(probes, lambda: prober.ask("step", {"message": {"tool_calls": [LOOKUP]}}))
            steps[0] += 1

        def probed(send: Callable[[], object]) -> tuple[list[float], list[float]]:
            """Two sends' times, and the probes' meanwhile."""
            sent: list[float] = []
            probes: list[float] = []
            stop = threading.Event()

            def probe() -> None:
                while not stop.is_set():
                    probe_round(probes)

            thread = threading.Thread(target=probe)
            thread.start()
            try:
                for _ in range(2):
                    timed(sent, lambda: replies.append(send()))
            finally:
                stop.set()
                thread.join()
            return sent, probes

        probe_round([])  # untimed: each route's first use
        frames, frame_probes = probed(lambda: sender.send(frame))
        bodies, body_probes = probed(lambda: post(url + "/reset", frame.encode()))
        answer = sender.ask("state")  # the sender's session still works after its frames
        for session in (sender, prober):
            session.close()
    for label, sent, probes in (("frames", frames, frame_probes), ("bodies", bodies, body_probes)):
        print(f"\n{label} {sent}; {len(probes)} probes, slowest {max(probes):.3f} s")
        assert len(probes) >= 10  # probes were answered while the frames were decoded...
        assert max(probes) < min(sent) / 3, (label, sent, sorted(probes)[-5:])  # ...quickly
    assert [reply["data"]["code"] for reply in replies[:2]] == ["UNKNOWN_TYPE"] * 2
    assert [reply[0] for reply in replies[2:]] == [400, 400]  # decoded: unknown reset keys
    assert answer["type"] == "state"
