"""Saving a run as it goes: a lock, an append-only journal, one final results file.

While ``evaluate`` runs, each finished simulation is appended as one line to the journal
``OUT.journal`` (its first line is the run's header: ``timestamp``, ``info``, ``tasks``), so
saving costs the same for the 10th and the 10,000th simulation. At the end the results file
``OUT`` is written once, in tau2's format (temp file, then rename), and the journal is removed.
A killed run leaves the journal (and, when it was resuming, the previous ``OUT``); ``--resume``
reads both. A torn last journal line (the process died mid-write) is ignored.

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
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from airline_gym.data.limits import RESULTS_MAX_BYTES, read_limited
from airline_gym.data.output import lock_path
from airline_gym.errors import ConfigError, SaveError
from airline_gym.file_lock import LockBusy, exclusive
from airline_gym.harness.results import JSONObject, Results, encode, parse_json, write_atomic
from airline_gym.harness.results.io import check_simulation

__all__ = ["RunFile"]


class RunFile:
    """The results file ``path`` of one run: use as a context manager (it holds the lock)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        given = Path(path)
        self.path = Path(os.path.realpath(given)) if given.is_symlink() else given
        self.journal = self.path.with_name(self.path.name + ".journal")
        self._lock_file = lock_path(self.path)
        self._lock = contextlib.ExitStack()
        self._file: IO[str] | None = None
        self._valid_size: int | None = None
        self._saved_lines = 0  # simulations this run appended to the journal
        self._made_journal = False

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
        if exc_type is not None and self._made_journal and not self._saved_lines:
            self.journal.unlink(missing_ok=True)  # failed before any episode was saved
        self._lock.close()

    def exists(self) -> bool:
        """Whether a finished file or a journal of this run is on disk."""
        return self.path.exists() or self.journal.exists()

    def load(self) -> Results | None:
        """The finished file and the journal merged (``None`` when neither exists).

        A simulation in the journal replaces one of the same (task, trial) in the file (it is
        a rerun, e.g. with ``--retry-errors``).
        """
        old = Results.load(self.path) if self.path.exists() else None
        if not self.journal.exists():
            return old
        header, sims = self._read_journal()
        if header is None:  # killed while writing its first line
            return old
        latest = {_key(s): s for s in sims}  # a rerun (--retry-errors) replaces the earlier one
        kept = [] if old is None else [s for s in old.simulations if _key(s) not in latest]
        base = old or Results.from_data({**header, "simulations": []}, str(self.journal))
        return Results(
            info=base.info,
            tasks=base.tasks,
            simulations=kept + list(latest.values()),
            timestamp=base.timestamp,
        )

    def _read_journal(self) -> tuple[JSONObject | None, list[JSONObject]]:
        source = str(self.journal)
        data = read_limited(self.journal, RESULTS_MAX_BYTES, "journal")
        self._valid_size = data.rfind(b"\n") + 1  # after it: an unfinished write, ignored
        lines = data[: self._valid_size].split(b"\n")[:-1]
        if not lines:
            return None, []
        header = parse_json(lines[0], f"{source}: line 1")
        if not isinstance(header, dict) or not isinstance(header.get("info", {}), dict):
            raise ConfigError(f"{source}: line 1 is not a run header")
        sims = []
        for number, line in enumerate(lines[1:], start=2):
            if line.strip():
                sim = parse_json(line, f"{source}: line {number}")
                check_simulation(sim, f"{source}: line {number}")
                sims.append(sim)
        return header, sims

    def start(self, results: Results, resume: bool) -> None:
        """Open the journal for appending (a new one holds ``results``' header first)."""
        with _saving(self.journal, "start the journal"):
            if resume and self.journal.exists() and self._valid_size != 0:
                if self._valid_size is not None:  # cut a torn last line before appending
                    os.truncate(self.journal, self._valid_size)
                self._file = open(self.journal, "a", encoding="utf-8")  # noqa: SIM115
                return
            self._made_journal = True
            self._file = open(self.journal, "w", encoding="utf-8")  # noqa: SIM115
            self._file.write(encode(results.header()) + "\n")
            self._file.flush()

    def append_line(self, line: str) -> None:
        """Journal one finished simulation, given as :func:`encode` made it (one line, flushed:
        a kill loses nothing written before it)."""
        assert self._file is not None, "call start() first"
        with _saving(self.journal, "journal a simulation", self):
            self._file.write(line + "\n")
            self._file.flush()
        self._saved_lines += 1

    def finish(self, results: Results, lines: dict[int, str] | None = None) -> None:
        """Write the final results file at once, then drop the journal."""
        cache = lines or {}
        sims = [cache.get(id(s)) or encode(s) for s in results.simulations]
        with _saving(self.path, "write the results file", self):
            write_atomic(self.path, results.header(), sims)
        if self._file is not None:
            self._file.close()
            self._file = None
        self.journal.unlink(missing_ok=True)

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


def _key(sim: Any) -> tuple[str, int]:
    return str(sim["task_id"]), int(sim.get("trial") or 0)
