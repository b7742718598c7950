"""Writing an output file whole or not at all: the counterpart of :mod:`~airline_gym.data.limits`.

Every command that writes a file (``generate``, ``warm-start``, ``eval``'s results and report
page, ``report``, ``export``; not ``--plot``'s image, which matplotlib writes) writes through
:class:`OutputFile`::

    with OutputFile(path, what="--out", inputs=[tasks_path]) as out:
        out.write(text)  # ... as the work goes

- The target must be a regular file or a new path: a folder, a device (``/dev/null``, a copy of
  ``/dev/full``), a fifo or a socket is refused before any work, and so is one of the command's
  own inputs (compared after resolving symlinks and ``./``; ``os.path.samefile`` where both
  exist). A symlink is followed: the file it points to is replaced, the link stays.
- The text goes to a temp file created exclusively (``O_EXCL``, an unpredictable name) in the
  target's folder, which is renamed over the target at the end (``os.replace``): a reader never
  sees a partial file and a planted symlink cannot redirect the write. Creating it is also the
  test that the folder takes a new file (read-only, ``/proc``, a name too long): refused before
  any work, in one line.
- Any exception, Ctrl-C included, removes the temp file and leaves the target as it was.
- ``lock=True`` (default): only one writer of a target at a time; a second one is refused at
  once. The lock file lives in the user's cache folder (``locks/``), never beside the target.

Problems found before the work starts are :class:`~airline_gym.errors.ConfigError` (exit 2);
a write that fails later (disk full) is :class:`~airline_gym.errors.SaveError` (exit 1). Both
carry the short reason in ``strerror``, as an ``OSError`` does.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO

from airline_gym.errors import AirlineGymError, ConfigError, SaveError
from airline_gym.file_lock import LockBusy, exclusive

__all__ = ["OutputFile", "check_output", "data_inputs", "lock_path"]

StrPath = str | os.PathLike[str]
#: The longest target name (in bytes) kept whole in its temp file's name, ``.NAME.XXXXXXXX.tmp``
#: (within the usual 255-byte limit on a name).
_LONGEST_NAME = 200


def lock_path(path: StrPath) -> Path:
    """The lock file of output ``path``: in the user's cache, named after its real path."""
    from airline_gym.data.cache import cache_dir

    real = os.path.realpath(path)
    digest = hashlib.sha256(real.encode("utf-8", "surrogatepass")).hexdigest()
    return cache_dir().parent / "locks" / f"{Path(real).name[:40]}-{digest[:16]}.lock"


def data_inputs(data_dir: StrPath | None = None) -> list[Path]:
    """The data files a command may read, to refuse as its output: the tau2 data in use (db,
    tasks, splits, policy, guidelines, sources) and tau3's two files when they are at hand
    (``$AIRLINE_GYM_TAU3_DIR`` or the cache; nothing is fetched for this)."""
    import dataclasses

    from airline_gym.data import tau3
    from airline_gym.data.locate import data_files

    files = data_files(data_dir)
    paths = [v for f in dataclasses.fields(files) if isinstance(v := getattr(files, f.name), Path)]
    if os.environ.get(tau3.ENV_TAU3_DIR) or tau3.tau3_installed():
        with contextlib.suppress(AirlineGymError, OSError):  # a bad folder: its error, later
            found = tau3.tau3_files()
            paths += [found.tasks, found.guidelines]
    return paths


def _refused(message: str, reason: str) -> ConfigError:
    """A refusal before any work; ``strerror`` holds the short reason, as an ``OSError``'s
    does, for callers that word their own line."""
    error = ConfigError(message)
    error.strerror = reason  # type: ignore[attr-defined]
    return error


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (or cannot be reached): compare the resolved paths
        return os.path.realpath(a) == os.path.realpath(b)


def check_output(path: StrPath, what: str = "--out", inputs: Iterable[StrPath] = ()) -> Path:
    """The file to write for output ``path`` (``path``, or the file its symlink points to);
    one-line ``ConfigError`` unless it is a regular file or a new path in an existing folder,
    and none of ``inputs``."""
    given = os.fspath(path)
    shown = f"{what} {given[:200]}"
    if not given:
        raise _refused(f"{what}: give a file name", "no file name")
    target = os.path.realpath(given) if os.path.islink(given) else given
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:  # a name too long, a path through a file, no permission
        raise _refused(f"cannot write {shown}: {_reason(exc)}", _reason(exc)) from None
    kind = None if mode is None else _kind(mode)
    if kind is not None:
        message = f"{shown} is {kind}: give a regular file's path (new or existing)"
        raise _refused(message, f"it is {kind}")
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        raise _refused(f"{shown}: no such folder {folder[:200]}", "no such folder")
    for source in inputs:
        if _same(target, os.fspath(source)):
            raise _refused(
                f"{shown} is one of this command's inputs ({os.fspath(source)[:200]}): "
                "refusing to write over it; choose another file",
                "it is one of the inputs",
            )
    return Path(target)


class OutputFile:
    """An output written to a temp file beside ``path`` and renamed over it at the end (see the
    module docstring). Use as a context manager; :meth:`write` text as it comes."""

    def __init__(
        self,
        path: StrPath,
        *,
        what: str = "--out",
        inputs: Iterable[StrPath] = (),
        lock: bool = True,
        make_folder: bool = False,
    ) -> None:
        self.path = Path(path)
        self.what = what
        self._inputs = list(inputs)
        self._lock = lock
        self._make_folder = make_folder
        self._held = contextlib.ExitStack()
        self._file: IO[str] | None = None
        self._tmp: str | None = None
        self.target = self.path
        self.chars = 0  # characters written so far
        self._cancelled = False

    def __enter__(self) -> OutputFile:
        if self._make_folder:
            with contextlib.suppress(OSError):  # refused below, in one line, if still missing
                self.path.parent.mkdir(parents=True, exist_ok=True)
        self.target = check_output(self.path, self.what, self._inputs)
        try:
            if self._lock:
                self._take_lock()
            self._open_temp()
        except BaseException:
            self._held.close()
            raise
        return self

    def _take_lock(self) -> None:
        lock = lock_path(self.target)
        try:
            self._held.enter_context(exclusive(lock, timeout=0))
        except LockBusy:
            raise _refused(
                f"{self.what} {self.path} is being written by another airline-gym command; "
                "wait for it to finish, or choose another file",
                "another command is writing it",
            ) from None
        except OSError as exc:
            message = f"cannot create the lock {lock}: {_reason(exc)}"
            raise _refused(message, _reason(exc)) from None

    def _open_temp(self) -> None:
        name = self.target.name
        if len(os.fsencode(name)) > _LONGEST_NAME:  # the temp's name must fit too
            name = name[:40] + "~"
        try:  # O_EXCL, mode 0600, a random name: nothing planted there is written through
            fd, self._tmp = tempfile.mkstemp(
                prefix=f".{name}.", suffix=".tmp", dir=self.target.parent
            )
        except OSError as exc:  # read-only, /proc, no permission, a name too long
            message = f"cannot write {self.what} {self.path}: {_reason(exc)}"
            raise _refused(message, _reason(exc)) from None
        try:
            os.chmod(self._tmp, 0o666 & ~_umask())  # a normal file's mode, as open() gives
            self._file = os.fdopen(fd, "w", encoding="utf-8")
        except BaseException:
            os.close(fd)
            self._discard()
            raise

    def write(self, text: str) -> None:
        """Append ``text`` to the temp file (``SaveError`` naming the file when it fails)."""
        assert self._file is not None, "use OutputFile as a context manager"
        try:
            self._file.write(text)
        except OSError as exc:
            raise self._failed(exc) from None
        self.chars += len(text)

    def cancel(self) -> None:
        """Leave the target as it was: the temp file is removed on exit, nothing replaced."""
        self._cancelled = True

    def write_all(self, chunks: Iterable[str]) -> None:
        """:meth:`write` each chunk."""
        for chunk in chunks:
            self.write(chunk)

    def _failed(self, exc: OSError) -> SaveError:
        """A failed write, in one line; ``strerror`` kept for callers that word their own."""
        error = SaveError(
            f"cannot write {self.what} {self.path}: {_reason(exc)}; it was left as it was"
        )
        error.strerror = exc.strerror
        return error

    def _discard(self) -> None:
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)
            self._tmp = None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            file, self._file = self._file, None
            if file is not None:
                try:
                    file.close()
                except OSError as error:  # e.g. the last flush on a full disk
                    if kind is None:
                        raise self._failed(error) from None
            if kind is None and self._tmp is not None and not self._cancelled:
                try:
                    os.replace(self._tmp, self.target)
                except OSError as error:
                    raise self._failed(error) from None
                self._tmp = None
        finally:
            self._discard()
            self._held.close()


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
