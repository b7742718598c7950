"""``generate`` on a fresh install with the package index as the only source: tau3's task file
(in no wheel) is not needed, because the ids its tasks name ship with the package
(``airline_gym/taskgen/tau3_named_ids.json``: ids only, the tau3 commit, the file's sha256),
checked against the file whenever it is at hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airline_gym.data import tau3
from airline_gym.domain.database import load_pristine
from airline_gym.errors import DataError
from airline_gym.taskgen import leaks
from tests.cli_runner import cli
from tests.conftest import TAU3_GUIDELINES, TAU3_TASKS

SHIPPED = json.loads(leaks.TAU3_NAMED_IDS.read_text(encoding="utf-8"))


@pytest.fixture
def no_tau3(no_tau3_files: Path) -> Path:
    """No tau3 folder, an empty cache, and any download refused (a closed port)."""
    return no_tau3_files


def test_the_shipped_ids_are_the_ones_the_pinned_tau3_file_names(tau3_for_module: None) -> None:
    assert SHIPPED["tau3_commit"] == tau3.TAU3_COMMIT
    assert (SHIPPED["file"], SHIPPED["sha256"]) == tau3.TAU3_FILES["tasks.json"]
    users, reservations = leaks.named_entities(json.loads(TAU3_TASKS.read_text()), load_pristine())
    assert (SHIPPED["users"], SHIPPED["reservations"]) == (sorted(users), sorted(reservations))
    assert len(users) == 34 and len(reservations) == 56
    assert set(SHIPPED) == {"about", "tau3_commit", "file", "sha256", "users", "reservations"}


def test_generate_needs_no_tau3_file_and_writes_the_same_tasks(
    tau3_for_module: None, no_tau3: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline = no_tau3 / "offline.json"
    done = cli("generate", "--n", "30", "--seed", "5", "--out", offline)
    assert done.returncode == 0, done.stderr
    assert "34 users and 165 reservations left out" in done.stderr
    assert not tau3.tau3_cache_dir().exists()  # nothing was fetched or cached
    folder = no_tau3 / "tau3"
    folder.mkdir()
    (folder / "tasks.json").write_bytes(TAU3_TASKS.read_bytes())
    (folder / "simulation_guidelines.md").write_bytes(TAU3_GUIDELINES.read_bytes())
    monkeypatch.setenv(tau3.ENV_TAU3_DIR, str(folder))  # at hand: read and checked
    at_hand = no_tau3 / "at-hand.json"
    assert cli("generate", "--n", "30", "--seed", "5", "--out", at_hand).returncode == 0
    assert offline.read_bytes() == at_hand.read_bytes()


def test_a_shipped_list_that_disagrees_with_the_file_at_hand_is_refused(
    tau3_for_module: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = dict(SHIPPED, users=SHIPPED["users"][1:])
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(wrong))
    monkeypatch.setattr(leaks, "TAU3_NAMED_IDS", path)
    with pytest.raises(DataError, match=r"name 34 users and 56 reservations, the list shipped"):
        leaks.tau3_named(load_pristine())
    path.write_text(json.dumps(dict(SHIPPED, sha256="0" * 64)))
    with pytest.raises(DataError, match="reinstall airline-gym"):
        leaks.tau3_named(load_pristine())


def test_an_error_that_needs_the_tau3_files_names_the_command_that_installs_them(
    no_tau3: Path,
) -> None:
    done = cli("tasks", "--benchmark", "tau3")
    assert done.returncode == 1
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("airline-gym tasks: error: Cannot download")
    assert "airline-gym data install FOLDER" in line
