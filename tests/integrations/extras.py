"""The optional libraries of the integration tests, imported only when a test uses them.

Collecting the suite imports every test module in every xdist worker, and torch, transformers,
trl, stable-baselines3 or verifiers cost seconds each to import. A module states what it needs
with :func:`require` (a cheap lookup, no import) and reaches a library through :func:`lazy`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from optional_libs import require

__all__ = ["lazy", "require"]


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
