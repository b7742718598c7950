"""The tau3 benchmark's own files: its airline tasks and the customer's guidelines.

tau3 (tau3-bench v1.0.0, tau2-bench's ``main``) changed only these two files of the airline data
(spec §13.12); everything else comes from the tau2 data (:mod:`airline_gym.data`). They are not
in any wheel: on first use they are downloaded from the tau3-bench repository at the pinned
commit (``$AIRLINE_GYM_TAU3_URL`` overrides the base URL), checked against the sha256 sums below
and cached beside the tau2 data. Offline, ``$AIRLINE_GYM_TAU3_DIR`` names a folder holding
them, checked the same way, or ``airline-gym data install FOLDER|URL`` (:func:`install_tau3`)
puts them into the cache once for all. A folder's files are found under their own names, in a
tau2-bench checkout's layout, or under any name (recognized by size and sha256).

A file whose size is not the expected one is refused before it is hashed. A download is bounded:
each file at most its expected size and :data:`_DOWNLOAD_TIMEOUT_S` of wall time in all (connect,
redirects, headers and body), whatever the server announces or drips.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from airline_gym.data.cache import _file_lock, _remove_tree, _sha256_file, cache_dir
from airline_gym.errors import ConfigError, DataError
from airline_gym.numbers import whole_number

__all__ = [
    "ENV_TAU3_DIR",
    "ENV_TAU3_URL",
    "INSTALL_COMMAND",
    "TAU3_COMMIT",
    "TAU3_FILES",
    "TAU3_SIZES",
    "TAU3_URL",
    "Tau3Files",
    "install_tau3",
    "locate_tau3",
    "tau3_at_hand",
    "tau3_cache_dir",
    "tau3_files",
    "tau3_installed",
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

#: The command that installs the files into the cache once for all (named by every error).
INSTALL_COMMAND = "airline-gym data install FOLDER (a folder holding them, or a mirror's URL)"

# File -> (size, mtime_ns) when its hash last matched: hashed once per process.
_VERIFIED: dict[Path, tuple[int, int]] = {}
# At most this many entries of a folder are looked at for files under other names.
_MAX_LISTED = 10_000


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
        paths, problem = locate_tau3(root)
        if problem is not None:
            raise DataError(
                f"{ENV_TAU3_DIR}={str(root)!r}: {problem}; it must hold {_WHERE}, or unset it "
                f"to download them (or install them once: {INSTALL_COMMAND})."
            )
        return Tau3Files(paths["tasks.json"], paths["simulation_guidelines.md"], "env")
    target = tau3_cache_dir()
    if not _verified(target):
        _fill_cache(target, _downloader(os.environ.get(ENV_TAU3_URL, "") or TAU3_URL))
    return _files(target, "cache")


def tau3_installed() -> bool:
    """Whether the cache holds the verified tau3 files (nothing is fetched)."""
    return _verified(tau3_cache_dir())


def tau3_at_hand() -> Tau3Files | None:
    """The verified tau3 files when they are here (``$AIRLINE_GYM_TAU3_DIR``, or the cache),
    None when they would have to be downloaded (nothing is fetched)."""
    if os.environ.get(ENV_TAU3_DIR, "") or tau3_installed():
        return tau3_files()
    return None


def install_tau3(source: str | None = None) -> Tau3Files:
    """Put the tau3 files into the cache, from a folder (any layout or names, see
    :func:`locate_tau3`) or a mirror's base URL (laid out as the repository; default the pinned
    commit's, or ``$AIRLINE_GYM_TAU3_URL``). Later runs use the cache without a setting."""
    target = tau3_cache_dir()
    if source is None or source.startswith(("http://", "https://")):
        _fill_cache(target, _downloader(source or os.environ.get(ENV_TAU3_URL, "") or TAU3_URL))
    else:
        root = Path(source).expanduser()
        paths, problem = locate_tau3(root)
        if problem is not None:  # the caller's folder: bad input, not a failed fetch
            raise ConfigError(f"{root}: {problem}; it must hold {_WHERE}.")
        _fill_cache(target, _copier(paths))
    return _files(target, "cache")


def _files(root: Path, source: str) -> Tau3Files:
    return Tau3Files(root / "tasks.json", root / "simulation_guidelines.md", source)


def _file_problem(path: Path, name: str) -> str | None:
    """Why ``path`` is not tau3's ``name`` (None when it verifies). The size is checked first;
    a file is hashed once per process unless its size or time changes."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot read {path} ({exc.strerror or exc})"
    expected = TAU3_SIZES[name]
    if st.st_size != expected:
        return f"{path} is {st.st_size} bytes, expected {expected} (not hashed)"
    signature = (st.st_size, st.st_mtime_ns)
    if _VERIFIED.get(path) == signature:
        return None
    try:
        digest = _sha256_file(path)
    except OSError as exc:
        return f"cannot read {path} ({exc.strerror or exc})"
    if digest != TAU3_FILES[name][1]:
        return f"{path} has sha256 {digest}, expected {TAU3_FILES[name][1]}"
    _VERIFIED[path] = signature
    return None


def _mismatch(folder: Path) -> str | None:
    """Why the files in ``folder`` (under their cache names) are not tau3's (None: they are)."""
    for name in TAU3_FILES:
        problem = _file_problem(folder / name, name)
        if problem is not None:
            return problem
    return None


def _verified(folder: Path) -> bool:
    return _mismatch(folder) is None


def _candidates(root: Path, name: str) -> list[Path]:
    """Files of ``root`` that may be tau3's ``name``: its own name, its place in a tau2-bench
    checkout (from the root or from ``data/tau2``), then any file of the root of its size."""
    rel = TAU3_FILES[name][0]
    fixed = [root / name, root / rel, root / rel.removeprefix("data/tau2/")]
    found = [p for p in fixed if p.is_file()]
    try:
        with os.scandir(root) as entries:
            for entry in itertools.islice(entries, _MAX_LISTED):
                path = Path(entry.path)
                if path in found or not entry.is_file():
                    continue
                if entry.stat().st_size == TAU3_SIZES[name]:
                    found.append(path)
    except OSError:
        pass
    return found


def locate_tau3(root: Path) -> tuple[dict[str, Path], str | None]:
    """(file name -> the verified file of ``root``, why not). A file is found under its own
    name, in a tau2-bench checkout's layout, or under any name (by its size and sha256)."""
    if not root.is_dir():
        return {}, "is not a folder"
    candidates = {name: _candidates(root, name) for name in TAU3_FILES}
    missing = [name for name, found in candidates.items() if not found]
    if missing:
        return {}, f"has no {' and no '.join(missing)}"
    paths: dict[str, Path] = {}
    for name, found in candidates.items():
        problems = [_file_problem(path, name) for path in found]
        good = [path for path, problem in zip(found, problems, strict=True) if problem is None]
        if not good:
            return {}, next(p for p in problems if p is not None)
        paths[name] = good[0]
    return paths, None


def _downloader(base: str) -> tuple[str, Callable[[Path], None]]:
    """(where from, a filler of a folder): both files downloaded from ``base``."""

    def fill(work: Path) -> None:
        log.info("downloading the tau3 files from %s", base)
        for name, (rel, _) in TAU3_FILES.items():
            _download(f"{base.rstrip('/')}/{rel}", work / name, TAU3_SIZES[name])

    return f"downloaded from {base}", fill


def _copier(paths: dict[str, Path]) -> tuple[str, Callable[[Path], None]]:
    """(where from, a filler of a folder): the verified ``paths`` copied."""
    import shutil

    def fill(work: Path) -> None:
        for name, path in paths.items():
            shutil.copyfile(path, work / name)

    return f"copied from {paths['tasks.json'].parent}", fill


def _fill_cache(target: Path, filler: tuple[str, Callable[[Path], None]]) -> None:
    """Fill a temp folder with ``filler``, verify it, then rename it into place."""
    import shutil
    import tempfile

    origin, fill = filler
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(parent / f".{target.name}.lock"):
            if _verified(target):  # another process fetched them while we waited
                return
            work = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.tmp-"))
            try:
                fill(work)
                problem = _mismatch(work)
                if problem is not None:
                    raise DataError(
                        f"The tau3 files {origin} do not verify: {problem}. Check "
                        f"{ENV_TAU3_URL}, or set {ENV_TAU3_DIR} to a folder holding {_WHERE}, "
                        f"or install them once: {INSTALL_COMMAND}."
                    )
                if os.path.lexists(target):
                    _remove_tree(target, parent)
                os.rename(work, target)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    except OSError as exc:
        raise DataError(
            f"Cannot write the tau3 files into {target} ({exc}). Set XDG_CACHE_HOME to a "
            f"writable folder, or set {ENV_TAU3_DIR} to a folder holding {_WHERE}, or install "
            f"them once: {INSTALL_COMMAND}."
        ) from exc


def _download(url: str, dest: Path, size: int) -> None:
    """Fetch ``url`` into ``dest``, at most ``size`` bytes in :data:`_DOWNLOAD_TIMEOUT_S` of
    wall time (redirects included); any failure is one line naming the fix."""
    outcome: list[BaseException | None] = []
    stop = threading.Event()
    worker = threading.Thread(
        target=_fetch_bounded,
        args=(url, dest, size, stop, outcome),
        name=DOWNLOAD_THREAD,
        daemon=True,
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
            f"{ENV_TAU3_URL}), or set {ENV_TAU3_DIR} to a folder holding {_WHERE}, or install "
            f"them once: {INSTALL_COMMAND}."
        )


#: The download worker's thread name (a given-up download's worker ends at its next read).
DOWNLOAD_THREAD = "airline-gym-tau3-download"


class _TooLarge(Exception):
    """The server sends (or announces) more than the file's expected size."""


def _fetch_bounded(
    url: str, dest: Path, size: int, stop: threading.Event, outcome: list[BaseException | None]
) -> None:
    """The worker of :func:`_download`: stream at most ``size`` bytes into ``dest``."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response:
            announced = response.headers.get("Content-Length", "").strip()
            length = whole_number(announced)
            if length is not None and length > size:
                raise _TooLarge(f"the server announces {length} bytes, expected {size}")
            if length is None and announced.isascii() and announced.isdigit():  # >18 digits
                digits = len(announced)
                raise _TooLarge(f"the server announces a {digits}-digit size, expected {size}")
            got = 0
            with open(dest, "wb") as fh:
                while not stop.is_set():
                    # at most one read from the socket: a drip cannot hold the worker (and
                    # its connection) past its stop waiting to fill 64 KiB
                    chunk = response.read1(min(1 << 16, size + 1 - got))
                    if not chunk:
                        break
                    got += len(chunk)
                    if got > size:
                        raise _TooLarge(f"the server sends more than the expected {size} bytes")
                    fh.write(chunk)
        outcome.append(None)
    except BaseException as exc:  # handed to the waiting thread, which words it
        if isinstance(exc, urllib.error.HTTPError):
            exc.close()  # an error response holds its connection; its status line is kept
        outcome.append(exc)


def _describe(exc: BaseException) -> str:
    """One line for a failed download."""
    import urllib.error

    if isinstance(exc, _TooLarge | urllib.error.HTTPError):
        return str(exc)
    reason = getattr(exc, "reason", None) or exc
    return " ".join(str(reason).split()) or type(exc).__name__
