"""Run the console script in a subprocess, as a user would (importable from any test module)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


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


def one_line_error(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The single stderr line of a command that failed with ``code`` (no traceback)."""
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]
