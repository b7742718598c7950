"""``airline-gym data``: the status of the data, and the tau3 files installed into the cache once
(from a folder under any names, a tau2-bench checkout, or a mirror on 127.0.0.1), so that no
later command needs ``$AIRLINE_GYM_TAU3_DIR``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from airline_gym.cli.main import main
from airline_gym.data import tau3
from tests.conftest import TAU3_GUIDELINES, TAU3_TASKS
from tests.data.test_tau3_files import repository, serve

pytestmark = pytest.mark.usefixtures("tau3")


@pytest.fixture
def fresh(no_tau3_files: Path) -> Path:
    """An empty cache for tau3 (the tau2 data where it is); no tau3 folder; no download."""
    return no_tau3_files


def _reference_names(folder: Path) -> Path:
    """The files under the names the reference folder gives them (not tau3-bench's)."""
    folder.mkdir()
    shutil.copyfile(TAU3_TASKS, folder / TAU3_TASKS.name)
    shutil.copyfile(TAU3_GUIDELINES, folder / TAU3_GUIDELINES.name)
    return folder


def _status(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["data"]) == 0
    return capsys.readouterr().out


def test_install_from_a_folder_once_then_tau3_runs_without_a_setting(fresh, capsys):
    assert "tau3 files: not installed" in _status(capsys)
    assert main(["tasks", "--benchmark", "tau3"]) == 1  # nothing installed, no download
    capsys.readouterr()
    folder = _reference_names(fresh / "mine")
    assert main(["data", "install", str(folder)]) == 0
    assert "tau3 files: installed in" in capsys.readouterr().out
    assert "(installed, verified)" in _status(capsys)
    assert main(["tasks", "--benchmark", "tau3", "--json"]) == 0  # from the cache, no setting
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == len(json.loads(TAU3_TASKS.read_text()))


def test_install_from_a_tau2_bench_checkout(fresh, capsys):
    checkout = repository(fresh / "www")
    assert main(["data", "install", str(checkout / "repo")]) == 0
    assert tau3.tau3_files().tasks.read_bytes() == TAU3_TASKS.read_bytes()
    assert main(["data", "install", str(checkout / "repo" / "data" / "tau2")]) == 0


def test_install_from_a_mirror(fresh, capsys):
    with serve(repository(fresh / "www")) as (url, paths):
        assert main(["data", "install", url]) == 0
    assert len(paths) == 2 and "(installed, verified)" in _status(capsys)


def test_the_env_folder_accepts_the_reference_s_own_names(fresh, monkeypatch, capsys):
    folder = _reference_names(fresh / "mine")
    monkeypatch.setenv(tau3.ENV_TAU3_DIR, str(folder))
    files = tau3.tau3_files()
    assert (files.tasks.name, files.guidelines.name) == (TAU3_TASKS.name, TAU3_GUIDELINES.name)
    assert f"{tau3.ENV_TAU3_DIR}={folder} (verified)" in _status(capsys)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["frob"], "invalid choice: 'frob'"),
        (["status", "x"], "status takes no FOLDER|URL"),
        (["install", "/no/such/folder"], "is neither a folder nor an http(s) URL"),
        (["install", ""], "FOLDER|URL is empty"),
        (["install", "EMPTY"], "has no tasks.json and no simulation_guidelines.md"),
        (["install", "WRONG"], "is 3 bytes, expected"),
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2(fresh, capsys, args, says):
    (fresh / "empty").mkdir()
    (fresh / "wrong").mkdir()
    (fresh / "wrong" / "tasks.json").write_bytes(b"[]\n")
    (fresh / "wrong" / "simulation_guidelines.md").write_bytes(TAU3_GUIDELINES.read_bytes())
    args = [{"EMPTY": str(fresh / "empty"), "WRONG": str(fresh / "wrong")}.get(a, a) for a in args]
    try:
        code = main(["data", *args])
    except SystemExit as exit_:  # argparse's own refusals
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("airline-gym data: error:") and says in err
    assert not tau3.tau3_cache_dir().exists()
