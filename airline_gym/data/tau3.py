"""The tau3 benchmark's own files: its airline tasks and the customer's guidelines.

tau3 (tau3-bench v1.0.0, tau2-bench's ``main``) changed only these two files of the airline data
(spec §13.12); everything else comes from the tau2 data (:mod:`airline_gym.data`). They are not
in any wheel: on first use they are downloaded from the tau3-bench repository at the pinned
commit (``$AIRLINE_GYM_TAU3_URL`` overrides the base URL), checked against the sha256 sums below
and cached beside the tau2 data. Offline, ``$AIRLINE_GYM_TAU3_DIR`` names a folder holding
``tasks.json`` and ``simulation_guidelines.md``, checked the same way.

A file whose size is not the expected one is refused before it is hashed. A download is bounded:
each file at most its expected size and :data:`_DOWNLOAD_TIMEOUT_S` of wall time in all (connect,
redirects, headers and body), whatever the server announces or drips.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from airline_gym.data.cache import _file_lock, _remove_tree, _sha256_file, cache_dir
from airline_gym.errors import DataError

__all__ = [
    "ENV_TAU3_DIR",
    "ENV_TAU3_URL",
    "TAU3_COMMIT",
    "TAU3_FILES",
    "TAU3_URL",
    "Tau3Files",
    "tau3_cache_dir",
    "tau3_files",
]

log = logging.getLogger("airline_gym.data")

#: tau3-bench v1.0.0 (2026-03-18) in github.com/sierra-research/tau2-bench.
TAU3_COMMIT = "01e812d1d1c4df6d8d2299bf175e482527112244"

#: Where the files are downloaded from (the raw files of the repository at the commit).
TAU3_URL = f"https://raw.githubusercontent.com/sierra-research/tau2-bench/{TAU3_COMMIT}"

ENV_TAU3_DIR = "AIRLINE_GYM_TAU3_DIR"

ENV_TAU3_URL = "AIRLINE_GYM_TAU3_URL"

#: File name -> (its path in the repository, the sha256 of its bytes at the commit).
TAU3_FILES: dict[str, tuple[str, str]] = {
    "tasks.json": (
        "data/tau2/domains/airline/tasks.json",
        "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
    ),
    "simulation_guidelines.md": (
        "data/tau2/user_simulator/simulation_guidelines.md",
        "740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3",
    ),
}

#: File name -> its size in bytes at the commit (checked before hashing, bounds a download).
TAU3_SIZES: dict[str, int] = {"tasks.json": 155_528, "simulation_guidelines.md": 1_449}

_DOWNLOAD_TIMEOUT_S = 60.0
_WHERE = (
    f"tasks.json and simulation_guidelines.md from tau3-bench (github.com/sierra-research/"
    f"tau2-bench at commit {TAU3_COMMIT[:7]}: {' and '.join(p for p, _ in TAU3_FILES.values())})"
)

# Folder -> (size, mtime_ns) per file when its hashes last matched: hashed once per process.
_VERIFIED: dict[Path, tuple[tuple[int, int], ...]] = {}


@dataclass(frozen=True)
class Tau3Files:
    """Paths of the two tau3 files; ``source`` is ``"env"`` (``$AIRLINE_GYM_TAU3_DIR``) or
    ``"cache"``."""

    tasks: Path
    guidelines: Path
    source: str


def tau3_cache_dir() -> Path:
    """The cache folder of the tau3 files, beside the tau2 data's."""
    return cache_dir().parent / f"tau3-bench-{TAU3_COMMIT[:12]}"


def tau3_files() -> Tau3Files:
    """The verified tau3 files: ``$AIRLINE_GYM_TAU3_DIR``, else the cache (filled on first use)."""
    folder = os.environ.get(ENV_TAU3_DIR, "")
    if folder:
        root = Path(folder).expanduser()
        _check_user_folder(root)
        return _files(root, "env")
    target = tau3_cache_dir()
    if not _verified(target):
        _fill_cache(target)
    return _files(target, "cache")


def _files(root: Path, source: str) -> Tau3Files:
    return Tau3Files(root / "tasks.json", root / "simulation_guidelines.md", source)


def _signature(folder: Path) -> tuple[tuple[int, int], ...] | None:
    sigs = []
    for name in TAU3_FILES:
        try:
            st = os.stat(folder / name)
        except OSError:
            return None
        sigs.append((st.st_size, st.st_mtime_ns))
    return tuple(sigs)


def _mismatch(folder: Path) -> str | None:
    """Why the files in ``folder`` are not tau3's (None when both verify)."""
    for name, (_, expected) in TAU3_FILES.items():
        path = folder / name
        try:
            size = os.stat(path).st_size
            if size != TAU3_SIZES[name]:
                return f"{path} is {size} bytes, expected {TAU3_SIZES[name]} (not hashed)"
            digest = _sha256_file(path)
        except OSError as exc:
            return f"cannot read {path} ({exc.strerror or exc})"
        if digest != expected:
            return f"{path} has sha256 {digest}, expected {expected}"
    return None


def _verified(folder: Path) -> bool:
    sig = _signature(folder)
    if sig is None:
        return False
    if _VERIFIED.get(folder) == sig:
        return True
    if _mismatch(folder) is not None:
        return False
    _VERIFIED[folder] = sig
    return True


def _check_user_folder(root: Path) -> None:
    missing = [name for name in TAU3_FILES if not (root / name).is_file()]
    if missing:
        raise DataError(
            f"{ENV_TAU3_DIR}={str(root)!r} has no {' and no '.join(missing)}; it must hold "
            f"{_WHERE}, or unset it to download them."
        )
    if not _verified(root):
        raise DataError(
            f"{ENV_TAU3_DIR}={str(root)!r}: {_mismatch(root)}; put the files {_WHERE} there, "
            "or unset it to download them."
        )


def _fill_cache(target: Path) -> None:
    """Download both files into a temp folder, verify them, then rename it into place."""
    import shutil
    import tempfile

    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(parent / f".{target.name}.lock"):
            if _verified(target):  # another process fetched them while we waited
                return
            work = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.tmp-"))
            try:
                base = os.environ.get(ENV_TAU3_URL, "") or TAU3_URL
                log.info("downloading the tau3 files from %s into %s", base, target)
                for name, (rel, _) in TAU3_FILES.items():
                    _download(f"{base.rstrip('/')}/{rel}", work / name, TAU3_SIZES[name])
                problem = _mismatch(work)
                if problem is not None:
                    raise DataError(
                        f"The tau3 files downloaded from {base} do not verify: {problem}. Check "
                        f"{ENV_TAU3_URL}, or set {ENV_TAU3_DIR} to a folder holding {_WHERE}."
                    )
                if os.path.lexists(target):
                    _remove_tree(target, parent)
                os.rename(work, target)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    except OSError as exc:
        raise DataError(
            f"Cannot write the tau3 files into {target} ({exc}). Set XDG_CACHE_HOME to a "
            f"writable folder, or set {ENV_TAU3_DIR} to a folder holding {_WHERE}."
        ) from exc


def _download(url: str, dest: Path, size: int) -> None:
    """Fetch ``url`` into ``dest``, at most ``size`` bytes in :data:`_DOWNLOAD_TIMEOUT_S` of
    wall time (redirects included); any failure is one line naming the fix."""
    outcome: list[BaseException | None] = []
    stop = threading.Event()
    worker = threading.Thread(
        target=_fetch_bounded, args=(url, dest, size, stop, outcome), daemon=True
    )
    worker.start()
    worker.join(_DOWNLOAD_TIMEOUT_S)
    if worker.is_alive():  # a drip or a stall: given up, the worker ends at its next read
        stop.set()
        problem: str | None = f"not complete after {_DOWNLOAD_TIMEOUT_S:.0f} s"
    else:
        problem = _describe(outcome[0]) if outcome and outcome[0] is not None else None
    if problem is not None:
        raise DataError(
            f"Cannot download the tau3 files from {url} ({problem}). Fix the network (or "
            f"{ENV_TAU3_URL}), or set {ENV_TAU3_DIR} to a folder holding {_WHERE}."
        )


class _TooLarge(Exception):
    """The server sends (or announces) more than the file's expected size."""


def _fetch_bounded(
    url: str, dest: Path, size: int, stop: threading.Event, outcome: list[BaseException | None]
) -> None:
    """The worker of :func:`_download`: stream at most ``size`` bytes into ``dest``."""
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response:
            announced = response.headers.get("Content-Length", "")
            if announced.strip().isdigit() and int(announced) > size:
                raise _TooLarge(f"the server announces {int(announced)} bytes, expected {size}")
            got = 0
            with open(dest, "wb") as fh:
                while not stop.is_set():
                    chunk = response.read(min(1 << 16, size + 1 - got))
                    if not chunk:
                        break
                    got += len(chunk)
                    if got > size:
                        raise _TooLarge(f"the server sends more than the expected {size} bytes")
                    fh.write(chunk)
        outcome.append(None)
    except BaseException as exc:  # handed to the waiting thread, which words it
        outcome.append(exc)


def _describe(exc: BaseException) -> str:
    """One line for a failed download."""
    import urllib.error

    if isinstance(exc, _TooLarge | urllib.error.HTTPError):
        return str(exc)
    reason = getattr(exc, "reason", None) or exc
    return " ".join(str(reason).split()) or type(exc).__name__
