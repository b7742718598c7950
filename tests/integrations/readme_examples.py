"""The README's integration examples, as the tests run them.

A Python block right under a ``<!-- example: NAME -->`` line of README.md is an example that a
test executes as written (``run_example``), so the README cannot drift from working code.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = re.compile(r"<!-- example: ([\w-]+) -->\n```python\n(.*?)```", re.DOTALL)


def examples() -> dict[str, str]:
    """Every marked example of README.md, by name."""
    return dict(MARKER.findall(README.read_text()))


def readme_example(name: str) -> str:
    """The code of the example marked ``<!-- example: name -->``."""
    found = examples()
    assert name in found, f"no '<!-- example: {name} -->' Python block in README.md"
    return found[name]


def run_example(
    name: str, namespace: dict[str, Any] | None = None, code: str | None = None
) -> dict:
    """Execute example ``name`` (or ``code`` taken from it) in ``namespace``; returns it.

    Top-level ``await`` is allowed, as in a notebook: such an example runs in a fresh event loop.
    """
    namespace = {} if namespace is None else namespace
    source = readme_example(name) if code is None else code
    compiled = compile(source, f"README.md:{name}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(compiled, namespace)  # the README's own example
    if inspect.iscoroutine(outcome):
        asyncio.run(outcome)
    return namespace
