"""docs/training-tasks.md: every ``bash`` block marked ``<!-- run: NAME -->`` runs as written (each
line a command, in a fresh folder, ``airline-gym`` being this checkout's CLI), and the figures the
page gives are the ones those commands print."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

#: Generating leaves out the benchmarks' entities: it reads tau3's task file.
pytestmark = pytest.mark.usefixtures("tau3_for_module")

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "training-tasks.md"
BLOCK = re.compile(r"<!-- run: ([\w-]+) -->\n```bash\n(.*?)```", re.DOTALL)


def blocks() -> dict[str, list[str]]:
    """Marked blocks by name: their command lines."""
    found = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    return {name: [ln for ln in body.splitlines() if ln.strip()] for name, body in found}


def run_line(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One documented command; ``airline-gym`` and ``python`` are this interpreter's."""
    argv = shlex.split(line)
    if argv[0] == "airline-gym":
        argv = [sys.executable, "-m", "airline_gym.cli", *argv[1:]]
    elif argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def test_the_page_marks_the_commands() -> None:
    # exploit-audit (500 tasks x 25 agents) runs in tests/harness/test_exploit_table.py (long)
    assert set(blocks()) == {
        "generate",
        "benchmark-grading",
        "kinds",
        "warm-start",
        "exploit-audit",
    }
    assert PAGE.read_text(encoding="utf-8").count("<!-- run: ") == 5


@pytest.mark.parametrize("name", ["generate", "benchmark-grading", "kinds", "warm-start"])
def test_each_documented_command_runs_as_written(name: str, tmp_path: Path) -> None:
    outputs = {}
    for line in blocks()[name]:
        done = run_line(line, tmp_path)
        assert done.returncode == 0, f"{line}: {done.stderr[-400:]}"
        outputs[line] = done.stdout
    text = PAGE.read_text(encoding="utf-8")
    if name == "generate":
        audit = outputs["airline-gym audit --tasks train.json --agents none"]
        assert re.search(
            r"strict, all\s+0/500 \(0%\)\s+0/500 \(0%\)\s+115/500 \(23%\)\s+500/500", audit
        )
        assert re.search(r"strict, DB unchanged\s+0/203 \(0%\)\s+0/203 \(0%\)\s+115/203", audit)
        assert "| strict, DB unchanged (203) | 0% | 0% | 57% | 100% |" in text
        counts = json.loads(
            run_line("airline-gym tasks --tasks train.json --distribution --json", tmp_path).stdout
        )
        assert counts["db"] == {"changes": 297, "unchanged": 203}
        assert counts["tier"] == {"gold": 183, "regular": 150, "silver": 167}
        assert "| tier | gold 183, silver 167, regular 150 |" in text
    if name == "benchmark-grading":
        audit = outputs["airline-gym audit --tasks benchmark-graded.json --agents none"]
        assert re.search(r"benchmark, all\s+161/500 \(32%\)\s+161/500 \(32%\)", audit)
        assert "| benchmark, all (500) | **32%** | **32%** | 41% | 100% |" in text
    if name == "warm-start":
        rows = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
        assert rows and all(row["reward"] == 1.0 for row in rows)
        assert all(row["messages"][0]["role"] == "system" and row["tools"] for row in rows)
        generated = {r["id"] for r in json.loads((tmp_path / "train.json").read_text())}
        assert {row["task_id"] for row in rows} <= generated
