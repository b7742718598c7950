"""The README's test command on a machine with only ``pip install -e ".[test]"``.

mypy must not need an optional library, ``--doctest-modules`` must not import one while
collecting, and a test that needs one skips with a reason there but fails under ``CI``.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


def _imported_modules(package: Path) -> set[str]:
    """Top-level names of every module the package's source imports."""
    found: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"airline_gym"}


def _installed_by(requirements: list[str]) -> set[str]:
    """Distributions (normalised names) that ``requirements`` pull in, transitively."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        if name in seen:
            continue
        seen.add(name)
        try:
            more = importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        todo += [r for r in map(Requirement, more) if r.marker is None or "extra" not in str(r)]
    return seen


def test_mypy_needs_no_library_the_test_extra_does_not_install() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = (
        project["project"]["dependencies"] + project["project"]["optional-dependencies"]["test"]
    )
    installed = _installed_by(declared)
    distributions = importlib.metadata.packages_distributions()
    ignored = {
        module.split(".")[0]
        for override in project["tool"]["mypy"]["overrides"]
        if override.get("ignore_missing_imports")
        for module in override["module"]
    }
    optional = {
        module
        for module in _imported_modules(ROOT / "airline_gym")
        if not {re.sub(r"[-_.]+", "-", d).lower() for d in distributions.get(module, [])}
        & installed
        # a declared dependency for another Python (async-timeout on 3.10) is not installed
        # here, and mypy, checking this Python, skips the branch that imports it
        and re.sub(r"[-_.]+", "-", module).lower() not in installed
    }
    assert "loguru" in optional and "torch" not in installed  # the check sees what it should
    assert optional <= ignored, f"mypy would need {sorted(optional - ignored)}"


def test_doctest_collection_imports_no_optional_library() -> None:
    """``--doctest-modules`` over the tests' helper modules with the training libraries absent
    (the test modules themselves skip at import when they lack one)."""
    blocked = ["torch", "transformers", "tokenizers", "trl", "datasets", "ray", "verifiers"]
    code = (
        "import sys, pytest\n"
        f"sys.modules.update(dict.fromkeys({blocked!r}))\n"
        "sys.exit(pytest.main(['--collect-only', '-q', '--doctest-modules', "
        "'-p', 'no:cacheprovider', '-n', '0', '--ignore-glob=*/test_*.py', 'tests']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]
    assert "error" not in done.stdout.lower().splitlines()[-1], done.stdout[-3000:]
    assert "tiny_policy" not in done.stdout


def test_a_missing_optional_library_skips_with_a_reason_and_fails_under_ci(tmp_path: Path) -> None:
    (tmp_path / "test_needs.py").write_text(
        "from optional_libs import import_optional, require\n"
        "def test_module():\n"
        "    import_optional('surely_not_installed_xyz')\n"
        "def test_require():\n"
        "    require('surely_not_installed_xyz')\n",
        encoding="utf-8",
    )
    outcomes = {}
    for ci in ("", "1"):
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
        if ci:
            env["CI"] = ci
        outcomes[ci] = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )
    skipped, failed = outcomes[""], outcomes["1"]
    assert skipped.returncode == 0 and "2 skipped" in skipped.stdout, skipped.stdout
    assert "needs surely_not_installed_xyz" in skipped.stdout
    assert failed.returncode == 1 and "2 failed" in failed.stdout, failed.stdout
    assert "CI installs every optional library" in failed.stdout
