"""Resolve the data files: an explicit folder, ``$AIRLINE_GYM_DATA_DIR``, or the cache."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from airline_gym.errors import DataError

if TYPE_CHECKING:
    pass

from airline_gym.data.cache import cache_dir
from airline_gym.data.fetch import _agent_instruction_from_source, ensure_cache
from airline_gym.data.limits import TEXT_MAX_BYTES, read_limited_text
from airline_gym.data.manifest import (
    _CHECKOUT_AGENT_SOURCE,
    _CHECKOUT_PATHS,
    _CHECKOUT_SOURCES,
    _LAYOUTS_HELP,
    _WHEEL_MEMBERS,
    AGENT_INSTRUCTION_NAME,
    DATA_FILE_NAMES,
    DATA_MODEL_SOURCE_NAME,
    ENV_DATA_DIR,
    GYM_AGENT_SOURCE_NAME,
    NL_EVALUATOR_SOURCE_NAME,
    TOOLS_SOURCE_NAME,
    DataFiles,
)


def data_files(data_dir: str | os.PathLike[str] | None = None) -> DataFiles:
    """Resolve the data files: ``data_dir``, else ``$AIRLINE_GYM_DATA_DIR``, else the cache."""
    if data_dir is not None:
        return _user_files(Path(data_dir), "data_dir")
    env_dir = os.environ.get(ENV_DATA_DIR, "")
    if env_dir:
        return _user_files(Path(env_dir), "env")
    return _cache_files(ensure_cache())


@cache
def _cache_files(root: Path) -> DataFiles:
    """The cache's ``DataFiles`` (immutable, so one per cache folder serves every caller)."""
    return _make_files({name: root / name for name in DATA_FILE_NAMES}, "cache")


def _user_files(root: Path, source: str) -> DataFiles:
    """Resolve a user-supplied folder in either accepted layout (existence checks only)."""
    origin = "data_dir argument" if source == "data_dir" else ENV_DATA_DIR
    if not root.is_dir():
        raise DataError(
            f"The {origin} {str(root)!r} is not a folder. Point it at a folder with the "
            f"airline data files, or unset it to use the cache. {_LAYOUTS_HELP}"
        )
    checkout = (root / "domains" / "airline").is_dir()
    if checkout:
        paths = {name: root.joinpath(*rel) for name, rel in _CHECKOUT_PATHS.items()}
    else:
        paths = {name: root / name for name in _WHEEL_MEMBERS}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        layout = "tau2-bench data/tau2" if checkout else "flat"
        raise DataError(
            f"The {origin} {str(root)!r} ({layout} layout) is missing: {', '.join(missing)}. "
            f"{_LAYOUTS_HELP}"
        )
    paths[AGENT_INSTRUCTION_NAME] = _user_agent_instruction(root, checkout, origin)
    for name, rel in _CHECKOUT_SOURCES.items():
        own = root.joinpath(*rel) if checkout else root / name
        paths[name] = own if own.is_file() else _cached(name, origin, root)
    return _make_files(paths, source)


def _cached(name: str, origin: str, root: Path) -> Path:
    """The cache's copy of ``name`` for a user folder that lacks it."""
    try:
        return ensure_cache() / name
    except DataError as exc:
        raise DataError(
            f"The {origin} {str(root)!r} has no {name}, and the fallback to the cached one "
            f"failed. Put an {name} into {root}, or: {exc}"
        ) from exc


def _user_agent_instruction(root: Path, checkout: bool, origin: str) -> Path:
    """Find the agent instruction for a user folder, falling back to the cache's."""
    flat = root / AGENT_INSTRUCTION_NAME
    if flat.is_file():
        return flat
    if checkout:
        source_file = root.joinpath(*_CHECKOUT_AGENT_SOURCE)
        if source_file.is_file():
            try:
                text = read_limited_text(source_file, TEXT_MAX_BYTES, "source file")
            except (OSError, UnicodeDecodeError) as exc:
                raise DataError(
                    f"Cannot read {source_file} ({exc}); fix it, or put an "
                    f"{AGENT_INSTRUCTION_NAME} into {root}."
                ) from exc
            instruction = _agent_instruction_from_source(text, str(source_file))
            if instruction is not None:
                return _store_derived_instruction(instruction)
    try:
        return ensure_cache() / AGENT_INSTRUCTION_NAME
    except DataError as exc:
        raise DataError(
            f"The {origin} {str(root)!r} has no {AGENT_INSTRUCTION_NAME}, and the fallback to "
            f"the cached one failed. Put an {AGENT_INSTRUCTION_NAME} into {root}, or: {exc}"
        ) from exc


def _store_derived_instruction(text: str) -> Path:
    """Write an extracted agent instruction to a content-addressed file and return its path."""
    import hashlib
    import tempfile

    data = text.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    name = f"agent_instruction-{digest[:16]}.txt"
    candidates = (
        cache_dir().parent / "derived",
        Path(tempfile.gettempdir()) / f"airline-gym-{os.getuid() if hasattr(os, 'getuid') else 0}",
    )
    errors: list[str] = []
    for folder in candidates:
        path = folder / name
        try:
            if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
                return path
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".agent_instruction-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
            return path
        except OSError as exc:
            errors.append(f"{folder}: {exc}")
    raise DataError(
        "Cannot store the agent instruction extracted from the tau2-bench checkout "
        f"({'; '.join(errors)}). Set XDG_CACHE_HOME to a writable folder, or put an "
        f"{AGENT_INSTRUCTION_NAME} into the data folder."
    )


def _make_files(paths: dict[str, Path], source: str) -> DataFiles:
    """Build a ``DataFiles`` from a cache-name -> path mapping."""
    return DataFiles(
        db=paths["db.json"],
        tasks=paths["tasks.json"],
        split_tasks=paths["split_tasks.json"],
        policy=paths["policy.md"],
        user_guidelines=paths["simulation_guidelines.md"],
        agent_instruction=paths[AGENT_INSTRUCTION_NAME],
        source=source,
        tools_source=paths[TOOLS_SOURCE_NAME],
        data_model_source=paths[DATA_MODEL_SOURCE_NAME],
        gym_agent_source=paths[GYM_AGENT_SOURCE_NAME],
        nl_evaluator_source=paths[NL_EVALUATOR_SOURCE_NAME],
    )
