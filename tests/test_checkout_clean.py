"""The suite fails a run that leaves a file in the checkout, and names the file.

A probe writes a file into the checkout in a child pytest; the child's run must fail and name
it (the parent removes the file). The check itself is ``tests/checkout_files.py``, run by
``tests/conftest.py`` at the end of every session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from checkout_files import ROOT, snapshot

HERE = Path(__file__).resolve()
PROBE = "AIRLINE_GYM_TEST_CHECKOUT_PROBE"


@pytest.mark.skipif(not os.environ.get(PROBE), reason="run by the test below, in a child")
def test_probe_that_writes_into_the_checkout() -> None:
    (ROOT / os.environ[PROBE]).write_text("left by a test\n")


def test_a_file_left_in_the_checkout_fails_the_run_and_is_named() -> None:
    if snapshot() is None:
        pytest.skip("not a git checkout: the check is off")
    name = f"left-by-probe-{os.getpid()}.json"
    try:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
                f"{HERE}::test_probe_that_writes_into_the_checkout",
            ],
            env={**os.environ, PROBE: name},
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )
    finally:
        (ROOT / name).unlink(missing_ok=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout, done.stdout  # the probe itself passed: the check failed it
    assert f"the tests left 1 change(s) in the checkout (git status): ?? {name}" in done.stdout


def test_no_run_file_is_committed() -> None:
    """Run files never belong in the repository (they hold the tau2 policy and tasks)."""
    if snapshot() is None:
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "results", "*.journal"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert tracked == []
