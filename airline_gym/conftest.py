"""pytest's ``--doctest-modules`` collects only the package modules that have doctests.

Collecting every module would import every one of them in every xdist worker, and the
integrations import torch, transformers, openenv-core, Ray or verifiers (seconds each) though
none of them has a doctest. Modules without a ``>>>`` line are left out of collection;
``tests/test_architecture.py`` checks every module's imports. (Not part of the wheel.)
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent

collect_ignore = [
    str(path.relative_to(_HERE))
    for path in sorted(_HERE.rglob("*.py"))
    if ">>>" not in path.read_text(encoding="utf-8")
]
