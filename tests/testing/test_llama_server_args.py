"""The real-model server's command line refuses a bad port in one line (no model loaded)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("port", ["-1", "65536", "http", ""])
def test_a_bad_port_is_one_line_and_exit_2(port: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "airline_gym.testing.llama_server", "--port", port],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "--port: must be a port from 0 to 65535" in done.stderr.strip().splitlines()[-1]
