"""Every test reaches loopback only: the guard in ``no_network.py``, here and in child processes.

192.0.2.1 is TEST-NET-1 (RFC 5737): never routed, so even a broken guard sends nothing useful.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import no_network
import pytest

from tests.conftest import _blocked

OUTSIDE = ("192.0.2.1", 9)
HERE = Path(__file__).resolve()
PROBE = "AIRLINE_GYM_TEST_PROBE"


def test_a_connection_outside_loopback_is_refused_and_names_the_test() -> None:
    with pytest.raises(no_network.NetworkBlocked) as info:
        socket.create_connection(OUTSIDE, timeout=1)
    assert "socket.connect to ('192.0.2.1', 9)" in str(info.value)
    assert "tests/test_no_network.py::test_a_connection_outside" in str(info.value)
    assert len(_blocked()) == 1  # recorded: the test fails even when the error is caught


@pytest.mark.parametrize("host", ["example.com", "example.org.", b"raw.githubusercontent.com"])
def test_a_name_lookup_outside_is_refused(host: str | bytes) -> None:
    with pytest.raises(no_network.NetworkBlocked, match="name lookup"):
        socket.getaddrinfo(host, 443)
    assert len(_blocked()) == 1


def test_udp_datagrams_outside_are_refused() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        with pytest.raises(no_network.NetworkBlocked):
            udp.sendto(b"x", OUTSIDE)
        assert len(_blocked()) == 1
        with pytest.raises(no_network.NetworkBlocked):  # sends nothing: refused, not recorded
            udp.connect(OUTSIDE)
        assert _blocked() == []


@pytest.mark.parametrize(
    ("bind", "host"),
    [("127.0.0.1", "127.0.0.1"), ("127.5.5.5", "127.5.5.5"), ("127.0.0.1", "localhost")],
)
def test_loopback_is_reached(bind: str, host: str) -> None:
    """The whole 127.0.0.0/8, and the name localhost."""
    with socket.create_server((bind, 0)) as server:
        accepted = threading.Thread(target=lambda: server.accept()[0].close(), daemon=True)
        accepted.start()
        with socket.create_connection((host, server.getsockname()[1]), timeout=5):
            accepted.join(5)
    assert _blocked() == []


def test_ipv6_loopback_is_allowed_and_others_are_not() -> None:
    assert no_network._is_loopback("::1") and no_network._is_loopback("::ffff:127.0.0.1")
    assert not no_network._is_loopback("2001:db8::1") and not no_network._is_loopback("10.0.0.1")


@pytest.mark.parametrize("pythonpath", ["inherited", "replaced"])
def test_a_child_process_is_guarded_too(pythonpath: str) -> None:
    """Even a child given its own ``PYTHONPATH`` (as tests of other venvs do)."""
    env = dict(os.environ)
    if pythonpath == "replaced":
        env["PYTHONPATH"] = str(HERE.parents[1])
    code = "import socket; socket.create_connection(('192.0.2.1', 9), timeout=1)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and "NetworkBlocked" in done.stderr, done.stderr
    blocked = _blocked()
    assert len(blocked) == 1 and "a child process" in blocked[0], blocked
    assert "test_a_child_process_is_guarded_too" in blocked[0]


@pytest.mark.skipif(os.environ.get(PROBE) != "1", reason="run by the test below, in a child")
def test_probe_that_swallows_the_refusal() -> None:
    with contextlib.suppress(OSError):  # as a library would, offline
        socket.create_connection(OUTSIDE, timeout=1)


@pytest.mark.skipif(os.environ.get(PROBE) != "1", reason="run by the test below, in a child")
@pytest.mark.network
def test_probe_marked_network() -> None:
    try:
        socket.create_connection(OUTSIDE, timeout=0.01)
    except OSError as exc:
        assert not isinstance(exc, no_network.NetworkBlocked)


def test_a_test_that_swallows_the_refusal_still_fails() -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", ""),
            f"{HERE}::test_probe_that_swallows_the_refusal",
            f"{HERE}::test_probe_marked_network",
        ],
        env={**os.environ, PROBE: "1"},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=HERE.parents[1],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout, done.stdout
    assert (
        "network outside loopback: blocked socket.connect to ('192.0.2.1', 9) from "
        "tests/test_no_network.py::test_probe_that_swallows_the_refusal (call)"
    ) in done.stdout
