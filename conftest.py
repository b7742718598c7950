"""Repository-wide pytest setup: ``--doctest-modules`` collects only modules with doctests.

``python -m pytest --doctest-modules airline_gym`` would import every module of the package in
every xdist worker, and the integrations import torch, transformers, openenv-core, Ray or
verifiers (seconds each) though none of them has a doctest. Modules without a ``>>>`` line
are left out of collection; ``tests/test_architecture.py`` checks every module's imports.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).parent / "airline_gym"

collect_ignore = [
    str(path.relative_to(Path(__file__).parent))
    for path in sorted(_PACKAGE.rglob("*.py"))
    if ">>>" not in path.read_text(encoding="utf-8")
]
