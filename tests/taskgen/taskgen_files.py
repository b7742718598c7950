"""A small generated task file, made once per test session (the real solver and customer)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from airline_gym.taskgen.generate import generate
from airline_gym.taskgen.output import write_tasks


@cache
def generated_records(n: int = 24, seed: int = 7, grading: str = "strict") -> list[dict[str, Any]]:
    """``n`` generated task records (cached per arguments)."""
    return generate(n, seed, grading=grading).records


def generated_file(folder: Path, n: int = 24, seed: int = 7, grading: str = "strict") -> Path:
    """The records of :func:`generated_records` as ``folder/generated-<grading>.json``."""
    path = folder / f"generated-{grading}-{n}-{seed}.json"
    if not path.exists():
        write_tasks(generated_records(n, seed, grading), path)
    json.loads(path.read_text())  # a complete file
    return path
