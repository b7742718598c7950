"""The suite fails a test run that leaves a connection open, and names where it was made.

Two probes run in a child pytest: one leaves a connection open until the session ends (it would
warn ``unclosed <socket>`` as the process exits), one drops an open connection for the garbage
collector (an unraisable ``ResourceWarning`` in whatever test collects it).
"""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()
PROBE = "AIRLINE_GYM_TEST_SOCKET_PROBE"
_kept: list[socket.socket] = []


def _connected_pair() -> tuple[socket.socket, socket.socket]:
    listener = socket.create_server(("127.0.0.1", 0))
    with listener:
        client = socket.create_connection(listener.getsockname(), timeout=5)
        server, _ = listener.accept()
    return client, server


@pytest.mark.skipif(os.environ.get(PROBE) != "kept", reason="run by the test below, in a child")
def test_probe_that_keeps_a_connection_open() -> None:
    _kept.extend(_connected_pair())


@pytest.mark.skipif(os.environ.get(PROBE) != "dropped", reason="run by the test below, in a child")
def test_probe_that_drops_a_connection() -> None:
    client, server = _connected_pair()
    cycle: list[object] = [client, server]
    cycle.append(cycle)  # only a collection finds it
    del client, server, cycle


@pytest.mark.skipif(os.environ.get(PROBE) != "dropped", reason="run by the test below, in a child")
def test_probe_that_collects() -> None:
    gc.collect()


@pytest.mark.skipif(os.environ.get(PROBE) != "loop", reason="run by the test below, in a child")
def test_probe_that_leaves_an_event_loop_set() -> None:
    asyncio.get_event_loop()  # the main thread has none: one is made and left set, as litellm does


@pytest.mark.skipif(os.environ.get(PROBE) != "loop", reason="run by the test below, in a child")
def test_probe_that_runs_a_loop_then_collects() -> None:
    asyncio.run(asyncio.sleep(0))  # would drop a loop left set, unclosed
    gc.collect()


def _run_probes(mode: str, *probes: str, code: int = 1) -> str:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *(f"{HERE}::{probe}" for probe in probes),
        ],
        env={**os.environ, PROBE: mode},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=HERE.parents[1],
    )
    assert done.returncode == code, done.stdout + done.stderr
    return done.stdout


def test_a_connection_left_open_at_the_end_fails_the_run_naming_its_maker() -> None:
    out = _run_probes("kept", "test_probe_that_keeps_a_connection_open")
    assert "ERROR at teardown of test_probe_that_keeps_a_connection_open" in out, out
    assert "2 socket(s) left open" in out, out
    assert "tests/test_open_sockets.py:28 in _connected_pair" in out, out
    assert "in test_probe_that_keeps_a_connection_open" in out, out


def test_a_connection_dropped_unclosed_fails_the_run_naming_its_maker() -> None:
    out = _run_probes("dropped", "test_probe_that_drops_a_connection", "test_probe_that_collects")
    assert "FAILED tests/test_open_sockets.py::test_probe_that_collects" in out, out
    assert "ResourceWarning: unclosed <socket.socket" in out, out
    assert "in test_probe_that_drops_a_connection" in out, out


def test_an_event_loop_a_test_left_set_is_closed_after_it() -> None:
    """A loop left set in the main thread (as litellm's blocking path leaves one) is closed after
    its test, so a later ``asyncio.run`` does not drop it unclosed in an innocent test."""
    leaves, runs = (
        "test_probe_that_leaves_an_event_loop_set",
        "test_probe_that_runs_a_loop_then_collects",
    )
    out = _run_probes("loop", leaves, runs, code=0)
    assert "2 passed" in out, out
