"""What a test run leaves in the checkout: ``git status`` before the session and after it.

The session's first process (xdist's controller, or pytest alone) takes :func:`snapshot` when it
starts and :func:`left_behind` when it ends; a path that is new in the status (a file the tests
wrote, a tracked file they changed or removed) fails the run (``tests/conftest.py``). Files that
``.gitignore`` covers (caches, virtualenvs) are not listed by ``git status`` and stay allowed.
Outside a git checkout (no ``git``, or an unpacked archive) nothing is checked.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def snapshot(root: Path = ROOT) -> frozenset[str] | None:
    """``git status`` of ``root``, one entry per path (None: not a git checkout)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=all"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return frozenset(e for e in done.stdout.decode("utf-8", "replace").split("\0") if e)


def left_behind(before: frozenset[str], root: Path = ROOT) -> list[str]:
    """The status entries that are new since ``before`` (e.g. ``?? results/run.json``)."""
    after = snapshot(root)
    return [] if after is None else sorted(after - before)
