"""The verl agent loop with the real verl (``verl_cases.py``, the README example: verl, included),
run in verl's own venv: verl 0.9 pins transformers < 5.11 and the ``trl`` extra needs >= 5.24, so
CI builds a venv for verl (``.ci/run``) and names its Python in ``$AIRLINE_GYM_VERL_PYTHON``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from extras import library_python

pytestmark = pytest.mark.long  # a child interpreter imports the library (a minute or more)
HERE = Path(__file__).resolve().parent
PYTHON_VAR = "AIRLINE_GYM_VERL_PYTHON"
CASES = 5  # the tests in verl_cases.py


def verl_python() -> str:
    return library_python(PYTHON_VAR, "verl", "verl")


def test_verl_agent_loop_cases_pass_with_the_real_verl():
    command = [verl_python(), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += [str(HERE / "verl_cases.py")]
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1])}
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.match(rf"^{CASES} passed\b", summary), summary  # none skipped, none missing
