"""``airline-gym tasks --kind/--distribution`` and ``audit --tasks`` on generated files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from taskgen_files import generated_file, generated_records

from airline_gym.taskgen.traits import TRAITS

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
        "trait",
        "trait_share",
    }
    assert sum(counts["db"].values()) == len(records)
    for trait in TRAITS:  # each trait counted as generate wrote it, a zero included
        n = sum(trait in r["airline_gym"]["traits"] for r in records)
        assert counts["trait"][trait] == n
        assert counts["trait_share"][trait] == round(n / len(records), 4)
    assert counts["db"]["unchanged"] == sum(not r["airline_gym"]["changes_db"] for r in records)
    assert counts["kind"]["cancel"] == sum("cancel" in r["airline_gym"]["kinds"] for r in records)
    assert set(counts["tier"]) <= {"regular", "silver", "gold"}
    table = _cli("tasks", "--tasks", path, "--distribution")
    assert "payment" in table.stdout and f"{len(records)} tasks" in table.stdout
    assert "false_claim" in table.stdout and "persona:several_at_once" in table.stdout


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


def test_a_file_the_other_commands_could_not_read_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tasks files are read up to 64 MiB (``$AIRLINE_GYM_MAX_FILE_MB``): a larger --n is refused
    at once when even the smallest tasks cannot fit, as soon as the tasks made so far show it
    will not, or at the task that would pass the limit; --out is left as it was, and no temp
    file stays beside it. (Before: --n 1000000 ran for minutes toward a 4.5 GB file.)"""
    from airline_gym.cli import generate as command
    from airline_gym.cli.main import main

    monkeypatch.delenv("AIRLINE_GYM_MAX_FILE_MB", raising=False)
    out = tmp_path / "t.json"
    out.write_text("earlier\n", encoding="utf-8")
    monkeypatch.setattr(command, "TASKS_MAX_BYTES", 64 << 10)  # 32 tasks of 2 KiB at most
    refusals = {
        "1000000": "--n 1,000,000 cannot fit (a task takes at least 2 KiB: 32 at most",
        "30": "--n 30 would make about ",
        "31": "--n 31 would make about ",
    }
    for n, says in refusals.items():
        assert main(["generate", "--n", n, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert says in err and "over the 64 KiB a tasks file may have" in err, err
    monkeypatch.setattr(command, "TASKS_MAX_BYTES", 2048)  # one task may fit: none does
    assert main(["generate", "--n", "1", "--out", str(out)]) == 2
    assert "--n 1 stopped at task 1: 0 fit" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
    monkeypatch.setattr(command, "TASKS_MAX_BYTES", 64 << 10)
    assert main(["generate", "--n", "10", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "generated 1 of 10 (" in err and "generated 10 of 10 (" in err  # progress
    assert out.stat().st_size <= 64 << 10 and len(json.loads(out.read_text())) == 10
