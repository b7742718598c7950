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
        "traits",
    }
    assert PAGE.read_text(encoding="utf-8").count("<!-- run: ") == 6


@pytest.mark.parametrize("name", ["generate", "benchmark-grading", "kinds", "warm-start", "traits"])
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
            r"strict, all\s+0/500 \(0%\)\s+0/500 \(0%\)\s+98/500 \(20%\)\s+500/500", audit
        )
        assert re.search(r"strict, DB unchanged\s+0/183 \(0%\)\s+0/183 \(0%\)\s+98/183", audit)
        assert "| strict, DB unchanged (183) | 0% | 0% | 54% | 100% |" in text
        counts = json.loads(
            run_line("airline-gym tasks --tasks train.json --distribution --json", tmp_path).stdout
        )
        assert counts["db"] == {"changes": 317, "unchanged": 183}
        assert counts["tier"] == {"gold": 183, "regular": 158, "silver": 159}
        assert "| tier | gold 183, silver 159, regular 158 |" in text
    if name == "benchmark-grading":
        audit = outputs["airline-gym audit --tasks benchmark-graded.json --agents none"]
        assert re.search(r"benchmark, all\s+178/500 \(36%\)\s+178/500 \(36%\)", audit)
        assert "| benchmark, all (500) | **36%** | **36%** | 42% | 100% |" in text
    if name == "traits":  # issue 36: the page's table is what the command prints, each >= 5%
        counts = json.loads(
            outputs["airline-gym tasks --tasks train-2000.json --distribution --json"]
        )
        table = dict(re.findall(r"^\| `([\w:]+)` \| (\d+) \| [\d.]+% \|$", text, re.M))
        assert {k: int(v) for k, v in table.items()} == counts["trait"]
        assert min(counts["trait"].values()) >= 0.05 * 2000
        assert counts["db"]["unchanged"] == 790 and "790 of the 2,000 (39.5%)" in text
        flown = [
            r
            for r in json.loads((tmp_path / "train-2000.json").read_text())
            if any(b.endswith("/flown") for b in r["airline_gym"]["bins"])
        ]
        past = [r for r in flown if "under_way" not in r["airline_gym"]["traits"]]
        assert (len(flown), len(past)) == (172, 17) and len(past) < 0.2 * len(flown)
    if name == "warm-start":
        rows = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
        assert rows and all(row["reward"] == 1.0 for row in rows)
        assert all(row["messages"][0]["role"] == "system" and row["tools"] for row in rows)
        generated = {r["id"] for r in json.loads((tmp_path / "train.json").read_text())}
        assert {row["task_id"] for row in rows} <= generated
