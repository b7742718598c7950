"""The tests reach no address but loopback: a guard on Python's sockets, here and in children.

:func:`install` wraps ``socket.socket.connect``/``connect_ex``/``sendto``/``sendmsg`` and the name
lookups (``getaddrinfo``, ``gethostbyname``, ``gethostbyname_ex``): an address outside
127.0.0.0/8 and ::1 (and a name other than ``localhost`` or this machine's own) raises
:class:`NetworkBlocked` (an ``OSError``, so libraries fail as they would offline) and is recorded.
conftest fails the test that made it, even when the error was caught, with the address and the
test's id. Unix sockets are not network. A UDP ``connect`` to an outside address is refused but
not recorded: it sends nothing (Ray asks the kernel for its own address that way, then uses
127.0.0.1).

Child processes: conftest puts ``no_network_site/`` on ``PYTHONPATH`` (also into an explicit
``env=`` given to ``subprocess.Popen``); its ``sitecustomize`` installs this guard in every Python
child (``airline-gym``, pip, Ray's workers, other venvs' interpreters), which appends what it
blocked to the file ``$AIRLINE_GYM_TEST_NETLOG`` for conftest to report. ``$AIRLINE_GYM_TEST_NETWORK
=allow`` (set only around tests marked ``network``) turns the guard off.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
import threading
from typing import Any

ENV_LOG = "AIRLINE_GYM_TEST_NETLOG"
ENV_ALLOW = "AIRLINE_GYM_TEST_NETWORK"
_INET = (socket.AF_INET, socket.AF_INET6)
_LOCAL_NAMES = {"", "localhost", "localhost.", "ip6-localhost", "ip6-loopback"}  # "": this host

_violations: list[str] = []
_lock = threading.Lock()
_installed = False


class NetworkBlocked(OSError):
    """A test (or its child process) tried to reach an address outside loopback."""


def _is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.split("%", 1)[0]  # an IPv6 scope id
    if name.lower() in _LOCAL_NAMES or name.lower().endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _where() -> str:
    test = os.environ.get("PYTEST_CURRENT_TEST", "outside any test")
    child = "" if os.environ.get(ENV_LOG) is None or _is_parent() else ", a child process"
    return f"{test} [pid {os.getpid()}{child}]"


def _is_parent() -> bool:
    return os.environ.get("AIRLINE_GYM_TEST_PARENT_PID") == str(os.getpid())


def _refuse(what: str, record: bool = True) -> NetworkBlocked:
    message = f"blocked {what} from {_where()}: the tests reach only loopback (127.0.0.0/8, ::1)"
    if record:
        with _lock:
            _violations.append(message)
        path = os.environ.get(ENV_LOG)
        if path and not _is_parent():
            try:
                with open(path, "a", encoding="utf-8") as log:
                    log.write(message.replace("\n", " ") + "\n")
            except OSError:
                pass
        print(f"airline-gym tests: {message}", file=sys.stderr)
    return NetworkBlocked(errno.EACCES, message)


def _allowed() -> bool:
    return os.environ.get(ENV_ALLOW) == "allow"


def _check(sock: socket.socket, address: Any, call: str) -> None:
    if _allowed() or sock.family not in _INET or not isinstance(address, tuple):
        return
    if not _is_loopback(address[0]):
        udp = sock.type == socket.SOCK_DGRAM and call == "connect"
        raise _refuse(f"socket.{call} to {address[:2]!r}", record=not udp)


def _lookup(host: object, call: str) -> None:
    if _allowed() or host is None:
        return
    name = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    if name in ("", socket.gethostname()) or _is_loopback(name) or _is_literal(name):
        return
    raise _refuse(f"a name lookup of {name!r} ({call})")


def take_violations() -> list[str]:
    """What was blocked in this process since the last call (cleared)."""
    with _lock:
        taken = list(_violations)
        _violations.clear()
    return taken


def install() -> None:
    """Wrap the socket calls (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_sendto = socket.socket.sendto
    real_sendmsg = socket.socket.sendmsg
    real_getaddrinfo = socket.getaddrinfo
    real_gethostbyname = socket.gethostbyname
    real_gethostbyname_ex = socket.gethostbyname_ex

    def connect(self: socket.socket, address: Any) -> None:
        _check(self, address, "connect")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check(self, address, "connect_ex")
        return real_connect_ex(self, address)

    def sendto(self: socket.socket, data: Any, *args: Any) -> int:
        _check(self, args[-1] if args else None, "sendto")
        return real_sendto(self, data, *args)  # type: ignore[arg-type]

    def sendmsg(self: socket.socket, buffers: Any, *args: Any) -> int:
        _check(self, args[2] if len(args) > 2 else None, "sendmsg")
        return real_sendmsg(self, buffers, *args)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        _lookup(host, "getaddrinfo")
        return real_getaddrinfo(host, *args, **kwargs)

    def gethostbyname(host: str) -> str:
        _lookup(host, "gethostbyname")
        return real_gethostbyname(host)

    def gethostbyname_ex(host: str) -> Any:
        _lookup(host, "gethostbyname_ex")
        return real_gethostbyname_ex(host)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = sendto  # type: ignore[method-assign,assignment]
    socket.socket.sendmsg = sendmsg  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
