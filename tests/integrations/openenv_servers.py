"""``airline-gym serve`` on a free port of 127.0.0.1: in a thread of the test process, or as a
process of its own (its own interpreter lock: what a timing test needs)."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from airline_gym.cli import serve
from airline_gym.cli.main import build_parser


@contextlib.contextmanager
def running_server(*options: str) -> Iterator[str]:
    """``airline-gym serve --port 0 OPTIONS...`` (its own ``make_server``); yields its URL."""
    args = build_parser().parse_args(["serve", "--port", "0", *options])
    with running(serve.make_server(args)) as url:
        yield url


@contextlib.contextmanager
def running(serving: serve.Serving) -> Iterator[str]:
    """``serving`` run in a thread of the test process until the block ends; yields its URL."""
    thread = threading.Thread(target=serving.run, name="airline-gym-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not serving.server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield serving.url
    finally:
        serving.server.should_exit = True
        thread.join(timeout=30)
        assert not thread.is_alive(), "the server did not stop"


class LoggedErrors(logging.Handler):
    """Keeps the error records (and whether any had a traceback) a logger emits meanwhile."""

    def __init__(self, logger: str = "uvicorn.error") -> None:
        super().__init__(logging.WARNING)
        self.logger = logging.getLogger(logger)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> LoggedErrors:
        self.logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)


@dataclass
class ServerProcess:
    """A running ``airline-gym serve`` process and what it printed first."""

    process: subprocess.Popen[bytes]
    first_line: str

    @property
    def url(self) -> str:
        return self.first_line.split()[-1]


@contextlib.contextmanager
def server_process(*options: str, open_files: int | None = None) -> Iterator[ServerProcess]:
    """``airline-gym serve --port 0 OPTIONS...`` as a process; stopped (SIGTERM) on exit.

    ``open_files``: the process's limit on open files (``RLIMIT_NOFILE``), else the inherited
    one. After the block, ``process.returncode`` and the bytes it wrote to stderr
    (``process.stderr_bytes``) can be checked.
    """
    program = "import sys; from airline_gym.cli.main import main; sys.exit(main())"
    if open_files is not None:
        limit = f"({open_files}, {open_files})"
        program = f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, {limit}); {program}"
    command = [sys.executable, "-c", program, "serve", "--port", "0", *options]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        lines: list[bytes] = []
        assert process.stdout is not None
        reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(timeout=120)  # a loaded machine imports slowly; a hang still fails
        assert lines and lines[0], "the server printed nothing"
        yield ServerProcess(process, lines[0].decode())
    finally:
        process.terminate()  # uvicorn stops gracefully, then ends by the signal it caught
        _, err = process.communicate(timeout=60)
        process.stderr_bytes = err  # type: ignore[attr-defined]
