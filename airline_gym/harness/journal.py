"""Saving a run as it goes: a lock, an append-only journal, one final results file.

While ``evaluate`` runs, each finished simulation is appended as one line to the journal
``OUT.journal`` (its first line is the run's header: ``timestamp``, ``info``, ``tasks``), so
saving costs the same for the 10th and the 10,000th simulation. At the end the results file
``OUT`` is written once, in tau2's format (temp file, then rename), and the journal is removed.
A killed run leaves the journal (and, when it was resuming, the previous ``OUT``); ``--resume``
reads both. A torn last journal line (the process died mid-write) is ignored.

No simulation is held in memory: the run keeps where each one is, in the journal or in the file
it resumes (:class:`~airline_gym.harness.results.saved.SavedSimulations`, under 200 bytes a
simulation with its key), and the results file is written from there, so memory is flat in the
number of simulations. The file it resumes and the journal are read a line at a time (each line
bounded); a results file in another layout than ours is read whole (bounded) and its
simulations set aside in an unnamed temp file. The results :meth:`RunFile.finish` returns read
their simulations from the written file when used.

Only one run may write ``OUT`` at a time: a lock (:mod:`airline_gym.file_lock`) is held from
before the "does it exist" check to the end; a second run on the same ``OUT`` is refused at once
with one line. The lock file lives in the user's cache folder (``locks/``, named after ``OUT``'s
real path), so nothing is left beside ``OUT``, and is removed when the run ends.

``OUT`` may be a symbolic link: the file it points to is written (atomically) and the link
stays. A file system that refuses a write (disk full, read-only, a directory where a file
should be) is one line (:class:`~airline_gym.errors.SaveError` or ``ConfigError``) and loses
nothing already saved. A run that fails before it saved anything removes the journal it made.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import IO, Any

from airline_gym.data.output import lock_path
from airline_gym.errors import ConfigError, SaveError
from airline_gym.file_lock import LockBusy, exclusive
from airline_gym.harness.results import JSONObject, Results, encode, write_atomic
from airline_gym.harness.results.saved import (
    SavedSimulations,
    StoredFile,
    scan_journal,
    scan_results_file,
)

__all__ = ["RunFile"]

Key = tuple[str, int]


class RunFile:
    """The results file ``path`` of one run: use as a context manager (it holds the lock)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        given = Path(path)
        self.path = Path(os.path.realpath(given)) if given.is_symlink() else given
        self.journal = self.path.with_name(self.path.name + ".journal")
        self._lock_file = lock_path(self.path)
        self._lock = contextlib.ExitStack()
        self._file: IO[bytes] | None = None
        self._valid_size: int | None = None
        self._saved_lines = 0  # simulations this run appended to the journal
        self._made_journal = False
        self._sims = SavedSimulations()
        self._keys: list[Key] = []  # of each simulation, in the order of _sims
        self._position: dict[Key, int] = {}
        self._endings: dict[int, Any] | None = None  # while loading: termination_reason by index
        self._ids: dict[str, str] = {}  # one string per task id
        self._readers: list[IO[bytes]] = []
        self._journal_source: int | None = None
        self._end = 0  # the journal's size

    def __enter__(self) -> RunFile:
        if self.path.is_dir():
            raise ConfigError(f"{self.path} is a directory: give a results file path")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file where a folder should be, no permission, ...
            raise ConfigError(
                f"cannot create the folder {self.path.parent}: {exc.strerror}"
            ) from None
        if self.journal.exists() and not self.journal.is_file():
            raise ConfigError(f"{self.journal} is not a file: remove it, or choose another out")
        with _saving(self._lock_file, "create the lock"):
            try:
                self._lock.enter_context(exclusive(self._lock_file, timeout=0))
            except LockBusy:
                raise ConfigError(
                    f"{self.path} is being written by another run; wait for it to finish "
                    "or choose another results file"
                ) from None
        for stale in self.path.parent.glob(f".{self.path.name}.*.tmp"):  # killed saves
            stale.unlink(missing_ok=True)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):  # e.g. a full disk refuses the last flush
                self._file.close()
            self._file = None
        for reader in self._readers:
            reader.close()
        self._readers.clear()
        if exc_type is not None and self._made_journal and not self._saved_lines:
            self.journal.unlink(missing_ok=True)  # failed before any episode was saved
        self._lock.close()

    def exists(self) -> bool:
        """Whether a finished file or a journal of this run is on disk."""
        return self.path.exists() or self.journal.exists()

    def load(self, drop: Collection[str] = ()) -> Results | None:
        """The finished file and the journal merged (``None`` when neither exists), its
        simulations left on disk; those whose ``termination_reason`` is in ``drop`` are left
        out (to be played again).

        A simulation in the journal replaces one of the same (task, trial) in the file (it is
        a rerun, e.g. with ``--retry-errors``).
        """
        endings: dict[int, Any] = {}
        self._endings = endings
        try:
            header = self._load_file() if self.path.exists() else None
            if self.journal.exists():
                journal_header = self._load_journal()
                if header is None and journal_header is not None:
                    header = journal_header
        finally:
            self._endings = None
        if header is None:
            return None
        if drop:
            kept = [i for i in range(len(self._keys)) if endings[i] not in drop]
            self._sims.keep(kept)
            self._keys = [self._keys[i] for i in kept]
            self._position = {key: i for i, key in enumerate(self._keys)}
        return Results(
            info=header.info,
            tasks=header.tasks,
            simulations=self._sims,
            timestamp=header.timestamp,
        )

    def _load_file(self) -> Results:
        """Index the simulations of the finished file; its header."""
        fh = self._opened(open(self.path, "rb"))  # noqa: SIM115 (closed with the run)
        source = self._sims.add_source(StoredFile(fh.fileno(), str(self.path)))
        staged: list[tuple[Key, int, int, Any]] = []
        header = scan_results_file(
            fh,
            str(self.path),
            lambda sim, at, n: staged.append((self._key(sim), at, n, _ending(sim))),
        )
        if header is None:  # another layout: read whole, set aside in an unnamed temp file
            return self._set_aside(Results.load(self.path))
        for key, at, length, ending in staged:
            self._put(key, source, at, length, ending)
        return Results.from_data({**header, "simulations": []}, str(self.path))

    def _set_aside(self, old: Results) -> Results:
        spool = self._opened(tempfile.TemporaryFile())  # noqa: SIM115 (closed with the run)
        source = self._sims.add_source(StoredFile(spool.fileno(), str(self.path)))
        at = 0
        for sim in old.simulations:
            data = encode(sim).encode("utf-8")
            spool.write(data + b"\n")
            self._put(self._key(sim), source, at, len(data), _ending(sim))
            at += len(data) + 1
        spool.flush()
        return Results(info=old.info, tasks=old.tasks, timestamp=old.timestamp)

    def _load_journal(self) -> Results | None:
        """Index the journal's simulations (replacing the file's of the same task and trial);
        its header (``None`` when it has no whole first line)."""
        fh = self._opened(open(self.journal, "rb"))  # noqa: SIM115 (closed with the run)
        source = self._sims.add_source(StoredFile(fh.fileno(), str(self.journal)))
        self._journal_source = source

        def found(sim: JSONObject, at: int, length: int) -> None:
            self._put(self._key(sim), source, at, length, _ending(sim))

        header, self._valid_size = scan_journal(fh, str(self.journal), found)
        if header is None:  # killed while writing its first line
            return None
        return Results.from_data({**header, "simulations": []}, str(self.journal))

    def _put(self, key: Key, source: int, at: int, length: int, ending: Any = None) -> None:
        """Where the simulation of ``key`` is (a later one of the same key replaces it)."""
        index = self._position.get(key)
        if index is None:
            index = self._position[key] = self._sims.add(source, at, length)
            self._keys.append(key)
        else:
            self._sims.put(index, source, at, length)
        if self._endings is not None:
            self._endings[index] = ending

    def _key(self, sim: JSONObject) -> Key:
        task_id = str(sim["task_id"])
        return self._ids.setdefault(task_id, task_id), int(sim.get("trial") or 0)

    def _opened(self, fh: IO[bytes]) -> IO[bytes]:
        self._readers.append(fh)
        return fh

    @property
    def simulations(self) -> SavedSimulations:
        """The run's simulations so far (the file's it resumes, then the journal's)."""
        return self._sims

    def finished(self) -> set[Key]:
        """The (task id, trial) pairs that have a simulation."""
        return set(self._position)

    def start(self, results: Results, resume: bool) -> None:
        """Open the journal for appending (a new one holds ``results``' header first)."""
        with _saving(self.journal, "start the journal"):
            if resume and self.journal.exists() and self._valid_size != 0:
                if self._valid_size is not None:  # cut a torn last line before appending
                    os.truncate(self.journal, self._valid_size)
                self._file = open(self.journal, "ab")  # noqa: SIM115
                self._end = self._file.tell()
                return
            self._made_journal = True
            self._file = open(self.journal, "wb")  # noqa: SIM115
            head = (encode(results.header()) + "\n").encode("utf-8")
            self._file.write(head)
            self._file.flush()
            self._end = len(head)
            reader = self._opened(open(self.journal, "rb"))  # noqa: SIM115
            self._journal_source = self._sims.add_source(
                StoredFile(reader.fileno(), str(self.journal))
            )

    def append(self, sim: JSONObject) -> None:
        """Journal one finished simulation (one line, flushed: a kill loses nothing written
        before it); only where it is stays in memory."""
        assert self._file is not None and self._journal_source is not None, "start() first"
        key = self._key(sim)
        data = encode(sim).encode("utf-8")
        with _saving(self.journal, "journal a simulation", self):
            self._file.write(data + b"\n")
            self._file.flush()
        self._put(key, self._journal_source, self._end, len(data))
        self._end += len(data) + 1
        self._saved_lines += 1

    def finish(self, results: Results, order: Callable[[Key], Any]) -> Results:
        """Write the final results file at once (simulations sorted by ``order`` of their
        (task id, trial)), drop the journal, and return the results reading from the file."""
        ranked = sorted(range(len(self._keys)), key=lambda i: order(self._keys[i]))
        with _saving(self.path, "write the results file", self):
            write_atomic(self.path, results.header(), self._sims.lines(ranked))
        if self._file is not None:
            self._file.close()
            self._file = None
        self.journal.unlink(missing_ok=True)
        return Results(
            info=results.info,
            tasks=results.tasks,
            simulations=saved_file(self.path),
            timestamp=results.timestamp,
        )

    def kept(self) -> str:
        """What is safe on disk, for an error message."""
        if self._saved_lines or not self._made_journal:
            return f"the simulations saved so far are in {self.journal}: resume to play the rest"
        return "no simulation had been saved"


@contextlib.contextmanager
def _saving(
    path: str | os.PathLike[str], doing: str, store: RunFile | None = None
) -> Iterator[None]:
    """A refused write is one line naming the file, the error and what is kept."""
    try:
        yield
    except OSError as exc:
        kept = f"; {store.kept()}" if store is not None else ""
        reason = exc.strerror or type(exc).__name__
        raise SaveError(f"cannot {doing} ({path}): {reason}{kept}") from None


def _ending(sim: JSONObject) -> Any:
    return sim.get("termination_reason")


def saved_file(path: Path) -> SavedSimulations:
    """The simulations of a results file just written in our layout, left on disk (held open:
    a later run writing the same path does not change them)."""
    stored = StoredFile.open(path)
    sims = SavedSimulations([stored])

    def found(sim: JSONObject, at: int, length: int) -> None:
        sims.add(0, at, length)

    with os.fdopen(os.dup(stored.fd), "rb") as fh:
        header = scan_results_file(fh, str(path), found, check=False)
    if header is None:
        raise SaveError(f"{path} is not the file this run wrote (it changed as it was written)")
    return sims
