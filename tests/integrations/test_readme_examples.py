"""Every marked example of the README and docs/ is code a test runs (the rest run in their
integration's module).

The Ray, OpenEnv and TRL examples need their module's Ray instance, server or trainer, so they
run there (``run_example`` in test_ray.py, test_openenv.py, test_trl.py); this module checks that
no marked example is left out and runs the ones that need nothing else.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from readme_examples import docs_text, examples, run_example

TESTS = Path(__file__).resolve().parents[1]


def test_every_marked_example_is_run_by_a_test():
    found = examples()
    assert docs_text().count("<!-- example: ") == len(found)  # each marks a Python block
    assert {"export", "ray", "openenv", "trl"} <= set(found)
    sources = "\n".join(p.read_text() for p in TESTS.rglob("test_*.py"))
    for name in found:
        quoted = rf"""["']{re.escape(name)}["']"""
        called = rf"(run_example|readme_example)\(\s*{quoted}|example: {re.escape(name)}\b"
        assert re.search(called, sources), f"no test runs the docs example {name!r}"


def test_export_example_writes_the_trajectories(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = run_example("export")
    rows = [json.loads(line) for line in (tmp_path / "gold.jsonl").read_text().splitlines()]
    assert [(r["task_id"], r["seed"], r["reward"]) for r in rows] == [
        ("17", 0, 1.0),
        ("18", 0, 1.0),
    ]
    from airline_gym.harness.export import normalize_messages

    assert [r["messages"] for r in rows] == [
        normalize_messages(r.messages) for r in namespace["results"]
    ]
    calls = [c for r in rows for m in r["messages"] for c in m.get("tool_calls") or []]
    assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
    assert rows[0]["messages"][0]["role"] == "system" and rows[0]["tools"]
