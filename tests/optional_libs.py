"""Optional libraries in tests: skip with a reason when one is missing, fail under ``CI``.

CI installs every extra and the reference (``.ci/run``), so there a missing library is a broken
install and must fail; on a machine with only ``.[test]`` installed the same tests are skipped,
each saying what it needs. Importable from any test module (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType
from typing import NoReturn

import pytest


def missing(reason: str) -> NoReturn:
    """Skip the caller (a test, or a whole module at import) for ``reason``; under CI, fail."""
    if os.environ.get("CI"):
        pytest.fail(f"CI installs every optional library, but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require(*modules: str) -> None:
    """Skip (under CI: fail) unless every module in ``modules`` can be found (no import)."""
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if absent:
        missing(f"needs {', '.join(absent)}")


def import_optional(name: str) -> ModuleType:
    """``name`` imported, or a skip (under CI: a failure) naming what is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"needs {name} ({exc})")
