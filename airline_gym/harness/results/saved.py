"""Simulations kept on disk and read one at a time, so that a run's memory does not grow with it.

A results file written by :func:`~airline_gym.harness.results.io.write_atomic` holds one
simulation per line after its ``timestamp``, ``info`` and ``tasks`` lines, and an eval journal
one per line after its header. :class:`SavedSimulations` is a read-only sequence of simulations
stored so: it keeps where each one is (a file, an offset, a length: 18 bytes), and reads and
parses one when it is asked for. :func:`scan_results_file` and :func:`scan_journal` find the
simulations of such files without holding them; a results file laid out otherwise (written by
another tool, or re-indented) is not scanned (``None``) and is read whole by the caller.
"""

from __future__ import annotations

import os
import threading
import weakref
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, overload

from airline_gym.data.limits import RESULTS_MAX_BYTES, read_line_limited, refuse_over_limit
from airline_gym.domain.validation import json_type
from airline_gym.errors import ConfigError
from airline_gym.harness.results.io import JSONObject, check_simulation, parse_json

__all__ = ["SavedSimulations", "StoredFile", "file_stamp", "scan_journal", "scan_results_file"]

#: Called with each simulation found: (the simulation, its offset, its length in bytes).
Found = Callable[[JSONObject, int, int], object]


class StoredFile:
    """A file simulations are read from by position, through a descriptor: it stays valid when
    the path is replaced or removed (a later run writing the same results file). With
    ``stamp``, a file changed in place since is a one-line error, never a wrong simulation.
    ``own``: the descriptor is closed when this object is collected (else its opener closes
    it)."""

    def __init__(
        self, fd: int, name: str, stamp: tuple[int, ...] | None = None, own: bool = False
    ) -> None:
        self.fd, self.name, self.stamp = fd, name, stamp
        if own:
            weakref.finalize(self, os.close, fd)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> StoredFile:
        """The file at ``path`` as it is now, held open for as long as this object lives."""
        name = os.fspath(path)
        fd = os.open(name, os.O_RDONLY)
        return cls(fd, name, file_stamp(os.fstat(fd)), own=True)

    def read(self, offset: int, length: int) -> bytes:
        """The ``length`` bytes at ``offset``."""
        if self.stamp is not None and file_stamp(os.fstat(self.fd)) != self.stamp:
            raise ConfigError(
                f"{self.name} was changed in place since its simulations were read: load it "
                "again (Results.load)"
            )
        data = _pread(self.fd, length, offset)
        if len(data) != length:
            raise ConfigError(f"{self.name}: a simulation is cut short at byte {offset}")
        return data


def _pread(fd: int, length: int, offset: int) -> bytes:
    """``os.pread`` (POSIX); elsewhere a seek and a read, one thread at a time."""
    if hasattr(os, "pread"):
        return os.pread(fd, length, offset)
    with _SEEKING:  # pragma: no cover - Windows
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)


_SEEKING = threading.Lock()


def file_stamp(st: os.stat_result) -> tuple[int, ...]:
    """What tells a file's content has not changed: device, inode, size, modification time."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class SavedSimulations(Sequence[JSONObject]):
    """A read-only sequence of simulations stored on disk, each read and parsed when used.

    Iterating reads each file once, in order of position; indexing reads one simulation. Each
    read gives a fresh object: editing it changes nothing stored.
    """

    def __init__(self, sources: Sequence[StoredFile] = ()) -> None:
        self._sources = list(sources)
        self._where = array("H")
        self._offsets = array("q")
        self._lengths = array("q")

    def add_source(self, source: StoredFile) -> int:
        """Register a file simulations are read from; its number for :meth:`add`."""
        self._sources.append(source)
        return len(self._sources) - 1

    def add(self, source: int, offset: int, length: int) -> int:
        """Append the simulation at ``offset`` (``length`` bytes) of source ``source``."""
        self._where.append(source)
        self._offsets.append(offset)
        self._lengths.append(length)
        return len(self._where) - 1

    def put(self, index: int, source: int, offset: int, length: int) -> None:
        """Replace simulation ``index`` by the one at ``offset`` of ``source``."""
        self._where[index], self._offsets[index], self._lengths[index] = source, offset, length

    def keep(self, indices: Sequence[int]) -> None:
        """Keep only the simulations ``indices``, in that order."""
        self._where = array("H", (self._where[i] for i in indices))
        self._offsets = array("q", (self._offsets[i] for i in indices))
        self._lengths = array("q", (self._lengths[i] for i in indices))

    def __len__(self) -> int:
        return len(self._where)

    @overload
    def __getitem__(self, index: int) -> JSONObject: ...

    @overload
    def __getitem__(self, index: slice) -> list[JSONObject]: ...

    def __getitem__(self, index: int | slice) -> JSONObject | list[JSONObject]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("simulation index out of range")
        return self._parse(index)

    def __iter__(self) -> Iterator[JSONObject]:
        for index in range(len(self)):
            yield self._parse(index)

    def lines(self, order: Sequence[int]) -> Iterator[str]:
        """The simulations ``order`` as the JSON text they are stored as (one line each)."""
        for index in order:
            yield self._read(index).decode("utf-8")

    def _read(self, index: int) -> bytes:
        return self._sources[self._where[index]].read(self._offsets[index], self._lengths[index])

    def _parse(self, index: int) -> JSONObject:
        name = self._sources[self._where[index]].name
        where = f"{name}: simulation at byte {self._offsets[index]}"
        sim = parse_json(self._read(index), where)
        check_simulation(sim, where)
        return sim  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))  # a copy elsewhere holds the simulations themselves

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        names = ", ".join(dict.fromkeys(s.name for s in self._sources)) or "no file"
        return f"<{len(self)} simulations saved in {names}>"


# --- finding the simulations of a file ---------------------------------------------------------
_LIMIT = RESULTS_MAX_BYTES


class _Lines:
    """A binary file read a line at a time, each line bounded, with its offset."""

    def __init__(self, fh: IO[bytes], name: str) -> None:
        self.fh, self.name, self.offset = fh, name, 0

    def next(self) -> bytes:
        line = read_line_limited(self.fh, _LIMIT, self.name)
        self.offset += len(line)
        return line


def _parsed(text: bytes) -> Any:
    """JSON text of one line; text that does not parse on its own means another layout (the
    whole file is then read, and tells what is wrong with it, if anything)."""
    try:
        return parse_json(text, "")
    except ConfigError:
        raise _OtherLayout from None


def _value(line: bytes, prefix: bytes) -> Any:
    """The JSON value of a ``"key": VALUE,`` line."""
    if not (line.startswith(prefix) and line.endswith(b",\n")):
        raise _OtherLayout
    return _parsed(line[len(prefix) : -2])


class _OtherLayout(Exception):
    """The file may be valid JSON, but it is not laid out a simulation per line."""


def scan_results_file(
    fh: IO[bytes], name: str, found: Found, check: bool = True
) -> JSONObject | None:
    """The header (``timestamp``, ``info``, ``tasks``) of a results file (open at its start as
    ``fh``) in :func:`~airline_gym.harness.results.io.write_atomic`'s layout, each simulation
    handed to ``found`` as it is read (checked as :meth:`Results.load` checks it; with
    ``check=False``, neither parsed nor checked: ``found`` gets an empty object). ``None`` when
    the file is laid out otherwise: ``found`` may have seen some of its simulations, to drop.
    A simulation of the wrong shape is a one-line ``ConfigError``."""
    refuse_over_limit(fh, _LIMIT, "results file", name)
    lines = _Lines(fh, name)
    try:
        return _scan(lines, name, found, check)
    except _OtherLayout:
        return None


def _scan(lines: _Lines, name: str, found: Found, check: bool) -> JSONObject:
    if lines.next() != b"{\n":
        raise _OtherLayout
    timestamp = _value(lines.next(), b'"timestamp": ')
    info = _value(lines.next(), b'"info": ')
    if not isinstance(info, dict):
        raise ConfigError(f"{name}: 'info' must be an object, not {json_type(info)}")
    tasks: list[Any] = []
    line = lines.next()
    if line == b'"tasks": [\n':
        while True:
            line = lines.next()
            last = line.endswith(b"}],\n")
            if not (last or line.endswith(b"},\n")):
                raise _OtherLayout
            tasks.append(_parsed(line[: -3 if last else -2]))
            if last:
                break
    elif line != b'"tasks": [],\n':
        raise _OtherLayout
    if not all(isinstance(t, dict) for t in tasks):
        raise ConfigError(f"{name}: 'tasks' must be a list of objects")
    if lines.next() != b'"simulations": [\n':
        raise _OtherLayout
    count = 0
    while True:
        start = lines.offset
        line = lines.next()
        if line == b"]\n":
            break
        more = line.endswith(b"},\n")
        if not (more or line.endswith(b"}\n")):
            raise _OtherLayout
        length = len(line) - (2 if more else 1)
        sim = _parsed(line[:length]) if check else {}
        if check:
            check_simulation(sim, f"{name}: simulation {count}")
        found(sim, start, length)
        count += 1
        if not more:
            if lines.next() != b"]\n":
                raise _OtherLayout
            break
    if lines.next() != b"}\n" or lines.next() != b"":
        raise _OtherLayout
    return {"timestamp": timestamp, "info": info, "tasks": tasks}


def scan_journal(fh: IO[bytes], name: str, found: Found) -> tuple[JSONObject | None, int]:
    """(the header of the journal open at its start as ``fh``, the size of its whole lines):
    each simulation line is handed to ``found``; a torn last line (the process died
    mid-write) is not, and is left out of the size. A malformed line is a one-line
    ``ConfigError`` naming it."""
    refuse_over_limit(fh, _LIMIT, "journal", name)
    lines = _Lines(fh, name)
    first = lines.next()
    if not first.endswith(b"\n"):
        return None, 0
    header = parse_json(first, f"{name}: line 1")
    if not isinstance(header, dict) or not isinstance(header.get("info", {}), dict):
        raise ConfigError(f"{name}: line 1 is not a run header")
    number = 1
    while True:
        start = lines.offset
        line = lines.next()
        number += 1
        if not line.endswith(b"\n"):  # the end, or an unfinished write: ignored
            return header, start
        if line.strip():
            where = f"{name}: line {number}"
            sim = parse_json(line, where)
            check_simulation(sim, where)
            found(sim, start, len(line) - 1)
