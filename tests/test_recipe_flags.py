"""The recipe (``examples/train_pipeline.py``) checks every number it is given before a stage
runs: a bad one is one line and exit 2, not a traceback minutes in (``--learning-rate nan`` was a
ValueError from the optimiser after generate and warm-start; ``--eval-temperature inf`` stopped
the run at eval, after both trainers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RECIPE = Path(__file__).resolve().parents[1] / "examples" / "train_pipeline.py"


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--learning-rate", "nan"),
        ("--learning-rate", "-1"),
        ("--eval-temperature", "inf"),
        ("--tasks", "-3"),
        ("--tasks", "9" * 5000),
        ("--sft-steps", "0"),
        ("--num-generations", "1"),
        ("--eval-max-tokens", "\u00b2"),
        ("--seed", "1e3"),
    ],
)
def test_a_bad_number_is_one_line_and_exit_2_before_any_stage(
    flag: str, value: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, str(RECIPE), "--out", str(out), flag, value],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]
    assert flag in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()  # nothing ran


def test_the_defaults_and_a_real_runs_settings_are_accepted(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_pipeline", RECIPE)
    assert spec is not None and spec.loader is not None
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    smoke = recipe.parse_args(["--out", str(tmp_path)])
    assert (smoke.tasks, smoke.learning_rate, smoke.eval_temperature) == (40, 1e-3, 1.0)
    real = recipe.parse_args(
        ["--out", str(tmp_path), "--tasks", "2000", "--sft-max-length", "0", "--batch", "8",
         "--num-generations", "8", "--learning-rate", "1e-6", "--eval-temperature", "0"]
    )  # fmt: skip
    assert (real.tasks, real.sft_max_length, real.learning_rate) == (2000, 0, 1e-6)
