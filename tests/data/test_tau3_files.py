"""The tau3 files: downloaded from a real HTTP server (on 127.0.0.1), verified, cached, refused.

The server lays the shared files out as the tau3-bench repository does (``data/tau2/...``) and
``$AIRLINE_GYM_TAU3_URL`` points at it; the cache goes to a fresh ``XDG_CACHE_HOME`` (the tau2
data is served from the existing cache through ``$AIRLINE_GYM_DATA_DIR``, so nothing else is
fetched).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from airline_gym import data
from airline_gym.cli.main import main
from airline_gym.data import tau3
from airline_gym.domain.tasks import load_task_set
from airline_gym.errors import DataError
from tests.conftest import TAU3_GUIDELINES, TAU3_TASKS

pytestmark = pytest.mark.usefixtures("tau3")


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]


@contextlib.contextmanager
def serve(root: Path) -> Iterator[tuple[str, list[str]]]:
    """(base URL, the paths requested) of a static file server on 127.0.0.1 over ``root``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/repo", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def repository(root: Path, guidelines: bytes | None = None) -> Path:
    """``root/repo`` laid out like tau3-bench at the pinned commit (optionally altered)."""
    tasks_path = root / "repo" / tau3.TAU3_FILES["tasks.json"][0]
    guide_path = root / "repo" / tau3.TAU3_FILES["simulation_guidelines.md"][0]
    for path in (tasks_path, guide_path):
        path.parent.mkdir(parents=True, exist_ok=True)
    tasks_path.write_bytes(TAU3_TASKS.read_bytes())
    guide_path.write_bytes(TAU3_GUIDELINES.read_bytes() if guidelines is None else guidelines)
    return root


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No tau3 folder, an empty cache for tau3, the tau2 data where it already is."""
    tau2_data = data.data_files()
    monkeypatch.setenv(data.ENV_DATA_DIR, str(tau2_data.db.parent))
    monkeypatch.delenv(tau3.ENV_TAU3_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_the_pins_are_the_spec_s() -> None:
    assert tau3.TAU3_COMMIT == "01e812d1d1c4df6d8d2299bf175e482527112244"
    assert tau3.TAU3_URL.endswith(f"sierra-research/tau2-bench/{tau3.TAU3_COMMIT}")
    for name, shared in (("tasks.json", TAU3_TASKS), ("simulation_guidelines.md", TAU3_GUIDELINES)):
        assert hashlib.sha256(shared.read_bytes()).hexdigest() == tau3.TAU3_FILES[name][1]


def test_first_use_downloads_verifies_and_caches(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(repository(fresh_cache / "www")) as (url, paths):
        monkeypatch.setenv(tau3.ENV_TAU3_URL, url)
        files = tau3.tau3_files()
        assert sorted(paths) == sorted(f"/repo/{rel}" for rel, _ in tau3.TAU3_FILES.values())
        assert files.source == "cache"
        assert files.tasks.parent == tau3.tau3_cache_dir()
        assert str(files.tasks).startswith(str(fresh_cache / "cache" / "airline-gym"))
        assert files.tasks.read_bytes() == TAU3_TASKS.read_bytes()
        assert files.guidelines.read_bytes() == TAU3_GUIDELINES.read_bytes()
        tau3._VERIFIED.clear()  # a new process: the cache is re-checked, not re-downloaded
        assert tau3.tau3_files() == files
        assert len(paths) == 2
    task_set = load_task_set("tau3")
    assert task_set.name == "tau3" and len(task_set) == 50
    assert task_set.tasks["7"].raw == load_task_set(TAU3_TASKS).tasks["7"].raw


def test_a_download_with_the_wrong_checksum_is_refused_and_not_cached(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = TAU3_GUIDELINES.read_bytes()
    altered = original[:-1] + (b"!" if original[-1:] != b"!" else b"?")  # the same size
    with serve(repository(fresh_cache / "www", guidelines=altered)) as (url, _):
        monkeypatch.setenv(tau3.ENV_TAU3_URL, url)
        with pytest.raises(DataError) as caught:
            tau3.tau3_files()
    text = str(caught.value)
    assert "\n" not in text and "do not verify" in text
    assert hashlib.sha256(altered).hexdigest() in text and tau3.ENV_TAU3_DIR in text
    assert not tau3.tau3_cache_dir().exists()


def test_an_unreachable_source_is_one_line_naming_the_fix(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(fresh_cache) as (url, _):
        pass  # the port is closed again: nothing listens there
    monkeypatch.setenv(tau3.ENV_TAU3_URL, url)
    assert main(["tasks", "--benchmark", "tau3"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("airline-gym tasks: error: Cannot download")
    assert tau3.ENV_TAU3_DIR in err and url in err
    with serve(fresh_cache) as (url, _):  # served, but not there (HTTP 404)
        monkeypatch.setenv(tau3.ENV_TAU3_URL, url)
        with pytest.raises(DataError, match=r"HTTP Error 404.*AIRLINE_GYM_TAU3_DIR"):
            tau3.tau3_files()


def test_an_offline_folder_serves_checked_the_same_way(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = fresh_cache / "offline"
    repository(fresh_cache / "www")
    folder.mkdir()
    monkeypatch.setenv(tau3.ENV_TAU3_DIR, str(folder))
    with pytest.raises(DataError, match=r"has no tasks\.json and no simulation_guidelines\.md"):
        tau3.tau3_files()
    (folder / "tasks.json").write_bytes(TAU3_TASKS.read_bytes())
    wrong = b"Be a customer.\n".ljust(TAU3_GUIDELINES.stat().st_size, b" ")  # the right size
    (folder / "simulation_guidelines.md").write_bytes(wrong)
    with pytest.raises(DataError, match=r"simulation_guidelines\.md has sha256") as caught:
        tau3.tau3_files()
    assert "\n" not in str(caught.value)
    (folder / "simulation_guidelines.md").write_bytes(TAU3_GUIDELINES.read_bytes())
    files = tau3.tau3_files()
    assert files.source == "env" and files.tasks == folder / "tasks.json"
    assert not tau3.tau3_cache_dir().exists()  # nothing was downloaded or copied
