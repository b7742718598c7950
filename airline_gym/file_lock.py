"""An exclusive lock between processes, through a lock file that is removed when released.

POSIX: ``flock`` on the file, which the holder unlinks before it lets go; a process that was
waiting on the unlinked file sees that the path no longer names what it locked and locks the new
one, so two holders never overlap. A killed holder's file stays (the kernel drops its lock) and
the next holder removes it. Elsewhere: the ``filelock`` package (which removes it on Windows).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LockBusy", "exclusive"]


class LockBusy(Exception):
    """Another process held the lock for the whole timeout."""


@contextlib.contextmanager
def exclusive(path: str | os.PathLike[str], timeout: float, poll: float = 0.1) -> Iterator[None]:
    """Hold the lock of ``path`` (made, with its folder, if missing); raise :class:`LockBusy`
    when another process holds it for ``timeout`` seconds (0: at once). ``OSError`` when the
    file cannot be made. The file is removed on release."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        with _portable(Path(path), timeout):
            yield
        return
    lock = Path(path)
    deadline = time.monotonic() + timeout
    while True:
        fd = _open(lock)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise LockBusy(str(lock)) from None
            time.sleep(poll)
            continue
        if _names(lock, fd):
            break
        os.close(fd)  # the holder before us removed it: lock the file now at the path
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)  # still held: a waiter on this file retries on the path's new one
        os.close(fd)


def _open(lock: Path) -> int:
    try:
        return os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:
        lock.parent.mkdir(parents=True, exist_ok=True)
        return os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)


def _names(lock: Path, fd: int) -> bool:
    """Whether ``lock`` still names the file open as ``fd``."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(lock))
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def _portable(lock: Path, timeout: float) -> Iterator[None]:  # pragma: no cover - Windows
    from filelock import FileLock, Timeout

    lock.parent.mkdir(parents=True, exist_ok=True)
    held = FileLock(str(lock), timeout=timeout)
    try:
        held.acquire()
    except Timeout:
        raise LockBusy(str(lock)) from None
    try:
        yield
    finally:
        held.release()
