"""mypy's configuration names only modules the package imports: ``warn_unused_configs`` prints
"unused section(s)" on every run for any other (the README's test command runs mypy)."""

from __future__ import annotations

import ast
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def imported_top_level_names() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "airline_gym").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_every_mypy_override_names_a_module_the_package_imports() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    overrides = config["tool"]["mypy"]["overrides"]
    named = {m.split(".")[0] for o in overrides for m in o["module"]}
    assert named and named <= imported_top_level_names(), named - imported_top_level_names()
