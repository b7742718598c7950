"""Run the console script as a user would: in a subprocess (:func:`cli`), or its ``main`` in
this process (:func:`run_cli`). Importable from any test module."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
from pathlib import Path

from airline_gym.cli.main import main


def cli(
    *args: str | Path,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    cwd: str | Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m airline_gym.cli ARGS`` with ``env`` added to this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})},
        cwd=cwd,
    )


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``main(ARGS)`` in this process, with its own stdin, stdout and stderr.

    For the many bad-argument cases: an interpreter start per case costs about a second, and
    ``main`` is exactly what the console script runs.
    """
    out, err = io.StringIO(), io.StringIO()
    saved_stdin, sys.stdin = sys.stdin, io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["airline-gym", *args], code, out.getvalue(), err.getvalue())


def one_line_error(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The single stderr line of a command that failed with ``code`` (no traceback)."""
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def default_sigint() -> None:
    """A ``preexec_fn``: in the child, Ctrl-C as in a terminal. A test runner's worker started
    in the background by a non-interactive shell (as CI may start it) ignores SIGINT, and an
    ignored signal stays ignored across exec, so a test's SIGINT would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
