"""What the tests open, they close: every socket names where it was made, and none is left open.

:func:`install` records, for each ``socket.socket`` made in this process, the stack that made it
(cheaply: frames are formatted only when shown) and appends it to the socket's ``repr``. So the
``ResourceWarning: unclosed <socket ...>`` of a socket collected unclosed, which pytest reports
as an unraisable warning (an error here, see pyproject's ``filterwarnings``) in whatever test the
collection happened to run in, names the code that opened it.

:func:`still_open` lists the connected sockets alive at the end of a session (after the
session's own fixtures are torn down and a collection): each would print ``sys:1:
ResourceWarning: unclosed`` as the process exits. Our own keep-alive connections
(``airline_gym.llm``'s) close themselves in ``__del__`` and are left out.

:func:`close_litellm_sync_clients` closes the blocking HTTP clients litellm caches for
``litellm.completion`` (it closes only its async ones at exit): the tests that call it directly
(the reference's judge, the README's loop) leave them behind. :func:`current_event_loop` and
:func:`close_new_event_loop` close an event loop a test left set in the main thread (litellm's
blocking path makes one there, asking ``asyncio.get_event_loop()`` for a loop to log on), which
the next ``asyncio.run`` would drop unclosed.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import sys
import traceback
import warnings
from typing import Any

_made_at: dict[int, traceback.StackSummary] = {}
_real_init = socket.socket.__init__
_real_repr = socket.socket.__repr__
_real_close = socket.socket._real_close  # type: ignore[attr-defined]
_real_detach = socket.socket.detach
_installed = False


def _init(self: socket.socket, *args: Any, **kwargs: Any) -> None:
    _real_init(self, *args, **kwargs)
    frames = traceback.walk_stack(sys._getframe(1))
    _made_at[id(self)] = traceback.StackSummary.extract(frames, limit=30, lookup_lines=False)


def _close(self: socket.socket, *args: Any, **kwargs: Any) -> Any:
    _made_at.pop(id(self), None)
    return _real_close(self, *args, **kwargs)


def _detach(self: socket.socket) -> int:
    _made_at.pop(id(self), None)
    return _real_detach(self)


def made_at(sock: socket.socket) -> str:
    """Where ``sock`` was made: its callers from the outermost, one line each."""
    stack = _made_at.get(id(sock))
    if stack is None:
        return "(made before the tests began)"
    return "\n".join(f"  {f.filename}:{f.lineno} in {f.name}" for f in reversed(stack))


def _repr(self: socket.socket) -> str:
    return f"{_real_repr(self)} made at:\n{made_at(self)}"


def install() -> None:
    """Record where each socket is made, and show it in the socket's ``repr``."""
    global _installed
    if _installed:
        return
    _installed = True
    socket.socket.__init__ = _init  # type: ignore[method-assign]
    socket.socket.__repr__ = _repr  # type: ignore[method-assign]
    socket.socket._real_close = _close  # type: ignore[attr-defined]
    socket.socket.detach = _detach  # type: ignore[method-assign]


def _is_own_keep_alive(sock: socket.socket) -> bool:
    return any(
        type(holder).__module__.startswith("airline_gym.llm.") for holder in gc.get_referrers(sock)
    )


def still_open() -> list[str]:
    """The connected internet sockets still open in this process, each with where it was made
    (and any socket a last collection finds unclosed)."""
    close_litellm_sync_clients()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    found = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    # type(), not isinstance(): a lazy module's proxy answers __class__ with a warning
    sockets = [o for o in gc.get_objects() if issubclass(type(o), socket.socket)]
    for sock in sockets:
        if sock.fileno() == -1 or sock.family not in (socket.AF_INET, socket.AF_INET6):
            continue
        try:
            peer = sock.getpeername()
        except OSError:
            continue  # listening or never connected: no connection to leave open
        if not _is_own_keep_alive(sock):
            found.append(f"socket to {peer} made at:\n{made_at(sock)}")
    return found


def current_event_loop() -> asyncio.AbstractEventLoop | None:
    """The loop set in this thread (not made when there is none, unlike
    ``asyncio.get_event_loop``)."""
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    return getattr(local, "_loop", None)


def close_new_event_loop(before: asyncio.AbstractEventLoop | None) -> None:
    """Close and unset this thread's loop if it is not ``before`` and no longer runs."""
    loop = current_event_loop()
    if loop is None or loop is before or loop.is_running() or loop.is_closed():
        return
    loop.close()
    asyncio.set_event_loop(None)


def close_litellm_sync_clients() -> None:
    """Close the blocking clients litellm cached for ``litellm.completion`` (not its async ones,
    which belong to their event loops and which litellm closes itself at exit)."""
    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    clients = getattr(cache, "cache_dict", None)
    if not isinstance(clients, dict):
        return
    for key, client in list(clients.items()):
        close = getattr(client, "close", None)
        if close is None or asyncio.iscoroutinefunction(close):
            continue
        if getattr(client, "is_closed", False) is True:
            continue
        close()
        clients.pop(key, None)
