"""The documentation's integration examples, as the tests run them.

A Python block right under a ``<!-- example: NAME -->`` line of README.md or a page under docs/
is an example that a test executes as written (``run_example``), so the docs cannot drift from
working code.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: README.md and every page under docs/, in a fixed order.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"<!-- example: ([\w-]+) -->\n```python\n(.*?)```", re.DOTALL)


def docs_text() -> str:
    """README.md and the docs/ pages, one after another."""
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def page_text(name: str) -> str:
    """One page of docs/ (``name`` relative to docs/, e.g. ``"cli.md"``)."""
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def examples() -> dict[str, str]:
    """Every marked example of README.md and docs/, by name."""
    found = MARKER.findall(docs_text())
    names = [name for name, _ in found]
    assert len(names) == len(set(names)), f"an example name is marked twice: {sorted(names)}"
    return dict(found)


def readme_example(name: str) -> str:
    """The code of the example marked ``<!-- example: name -->``."""
    found = examples()
    assert name in found, f"no '<!-- example: {name} -->' Python block in README.md or docs/"
    return found[name]


def run_example(
    name: str, namespace: dict[str, Any] | None = None, code: str | None = None
) -> dict:
    """Execute example ``name`` (or ``code`` taken from it) in ``namespace``; returns it.

    Top-level ``await`` is allowed, as in a notebook: such an example runs in a fresh event loop.
    """
    namespace = {} if namespace is None else namespace
    source = readme_example(name) if code is None else code
    compiled = compile(source, f"docs:{name}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(compiled, namespace)  # the docs' own example
    if inspect.iscoroutine(outcome):
        asyncio.run(outcome)
    return namespace
