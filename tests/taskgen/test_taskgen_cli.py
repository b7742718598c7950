"""``airline-gym tasks --kind/--distribution`` and ``audit --tasks`` on generated files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from taskgen_files import generated_file, generated_records

#: Generating leaves out the benchmarks' entities: it reads tau3's task file.
pytestmark = pytest.mark.usefixtures("tau3_for_module")


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated_file(tmp_path_factory.mktemp("cli"), 40, 5)


def test_kind_filter_keeps_tasks_with_that_request(path: Path) -> None:
    records = generated_records(40, 5)
    want = [r["id"] for r in records if "cancel" in r["airline_gym"]["kinds"]]
    done = _cli("tasks", "--tasks", path, "--kind", "cancel", "--json")
    assert done.returncode == 0, done.stderr
    assert [t["id"] for t in json.loads(done.stdout)] == want and want
    refused = [r["id"] for r in records if "cancel/refused" in r["airline_gym"]["bins"]]
    done = _cli("tasks", "--tasks", path, "--kind", "cancel/refused", "--json")
    assert [t["id"] for t in json.loads(done.stdout)] == refused


def test_distribution_counts_every_dimension(path: Path) -> None:
    records = generated_records(40, 5)
    done = _cli("tasks", "--tasks", path, "--distribution", "--json")
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert set(counts) == {
        "kind",
        "outcome",
        "requests",
        "db",
        "tier",
        "cabin",
        "passengers",
        "payment",
    }
    assert sum(counts["db"].values()) == len(records)
    assert counts["db"]["unchanged"] == sum(not r["airline_gym"]["changes_db"] for r in records)
    assert counts["kind"]["cancel"] == sum("cancel" in r["airline_gym"]["kinds"] for r in records)
    assert set(counts["tier"]) <= {"regular", "silver", "gold"}
    table = _cli("tasks", "--tasks", path, "--distribution")
    assert "payment" in table.stdout and f"{len(records)} tasks" in table.stdout


def test_audit_summary_shows_each_agent_by_grading_and_db_change(path: Path) -> None:
    records = generated_records(40, 5)
    unchanged = sum(not r["airline_gym"]["changes_db"] for r in records)
    done = _cli("audit", "--tasks", path, "--agents", "none")
    assert done.returncode == 0, done.stderr
    rows = {line.split("  ")[0]: line for line in done.stdout.splitlines()}
    assert f"0/{unchanged} (0%)" in rows["strict, DB unchanged"]
    assert rows["strict, DB unchanged"].endswith(f"{unchanged}/{unchanged} (100%)")
    assert rows["strict, all"].count(f"0/{len(records)} (0%)") == 2
    record = json.loads(_cli("audit", "--tasks", path, "--json", "--agents", "none").stdout)
    # looking up then refusing passes only the refusals it words right and has nothing to say in
    assert 0 < record["counts"]["lookup"] <= unchanged
    assert record["counts"]["gold-dialogue"] == len(records)


def test_same_seed_gives_a_byte_identical_file(tmp_path: Path) -> None:
    outs = []
    for name, seed in (("a", "9"), ("b", "9"), ("c", "10")):
        out = tmp_path / f"{name}.json"
        done = _cli("generate", "--n", "30", "--seed", seed, "--out", out)
        assert done.returncode == 0, done.stderr
        assert "wrote 30 tasks" in done.stdout and "466 users" in done.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]
    assert outs[0].endswith(b"]\n") and len(json.loads(outs[0])) == 30


def test_a_file_too_large_for_the_other_commands_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from airline_gym.cli import generate as command
    from airline_gym.cli.main import main

    monkeypatch.delenv("AIRLINE_GYM_MAX_FILE_MB", raising=False)
    monkeypatch.setattr(command, "TASKS_MAX_BYTES", 10_000)
    assert main(["generate", "--n", "5", "--out", str(tmp_path / "t.json")]) == 0
    assert "over the 0 MiB a tasks file may have elsewhere" in capsys.readouterr().err
    monkeypatch.setattr(command, "TASKS_MAX_BYTES", 10**9)
    assert main(["generate", "--n", "5", "--out", str(tmp_path / "t.json")]) == 0
    assert "note:" not in capsys.readouterr().err
