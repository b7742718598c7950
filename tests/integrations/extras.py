"""The optional libraries of the integration tests, imported only when a test uses them.

Collecting the suite imports every test module in every xdist worker, and torch, transformers,
trl, stable-baselines3 or verifiers cost seconds each to import. A module states what it needs
with :func:`require` (a cheap lookup, no import) and reaches a library through :func:`lazy`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

import pytest
from optional_libs import require

__all__ = ["lazy", "library_python", "require"]


class LazyModule:
    """A module imported on first attribute access (``lazy("verifiers.v1").Env``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attribute)


def lazy(name: str) -> Any:
    """``name``, imported when first used."""
    return LazyModule(name)


def library_python(variable: str, module: str, what: str) -> str:
    """The Python to run a library's tests with, when it cannot share this venv: ``$variable``
    (CI builds that venv), else this interpreter if it has ``module``. Otherwise skip, or in CI
    fail, as :func:`require` does."""
    given = os.environ.get(variable)
    if given:
        return given
    if importlib.util.find_spec(module) is not None:
        return sys.executable
    if os.environ.get("CI"):
        raise ImportError(f"CI installs {what} in a venv of its own, but ${variable} is not set")
    pytest.skip(f"needs {what} (here, or in a venv named by ${variable})")
