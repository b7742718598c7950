"""The oldest Python the package claims (``requires-python >= 3.10``), run for real.

CI builds a venv of pyenv's 3.10 with the core package only (``.ci/run``) and names its Python
in ``$AIRLINE_GYM_PY310_PYTHON``: there the demo plays and grades an episode, and LLM requests
cancelled mid-reply end at once (before 3.11 the time limits come from ``async_timeout``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from optional_libs import missing

pytestmark = pytest.mark.long  # a child interpreter imports the package
REPO = Path(__file__).resolve().parents[1]
PYTHON_VAR = "AIRLINE_GYM_PY310_PYTHON"


def py310() -> str:
    given = os.environ.get(PYTHON_VAR)
    if not given:
        missing(f"needs a Python 3.10 venv with the package, named by ${PYTHON_VAR}")
    return str(given)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}
    return subprocess.run(
        [py310(), *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=600
    )


def test_it_is_python_310() -> None:
    done = run("-c", "import sys, airline_gym; print(sys.version_info[:2], airline_gym.__file__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("(3, 10)") and str(REPO) in done.stdout


def test_the_demo_plays_and_grades_an_episode() -> None:
    done = run("-m", "airline_gym.cli", "demo")
    assert done.returncode == 0, done.stderr
    assert "reward=1.0" in done.stdout


def test_requests_cancelled_mid_reply_end_at_once() -> None:
    done = run(str(REPO / "tests" / "robustness" / "cancel_mid_reply.py"))
    assert done.returncode == 0, done.stderr
    ends = json.loads(done.stdout)
    assert [outcome for outcome, _ in ends] == ["cancelled"] * len(ends) and len(ends) == 40
    assert max(seconds for _, seconds in ends) < 5  # the drip lasts 8 s, the timeout 60 s
