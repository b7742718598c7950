"""Every file the product reads whole is refused over its documented size, in one line, before
it is read: each reader runs in a child process whose address space is capped at 2 GiB, on an
8 GiB sparse file (no disk used). Reading such a file would be a MemoryError there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import airline_gym
from airline_gym.data import data_files
from airline_gym.data.limits import (
    RESULTS_MAX_BYTES,
    TEXT_MAX_BYTES,
    FileTooLargeError,
    read_limited,
    read_limited_text,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and sparse files")

_CHILD = """
import json, resource, sys, io, contextlib
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
cases = json.loads(sys.argv[1])
out = {}
for name, call in cases.items():
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if call[0] == "cli":
                from airline_gym.cli.main import main
                code = main(call[1])
            else:
                from airline_gym.users import make_user
                try:
                    make_user("replay", source=call[1])
                    code = 0
                except Exception as exc:  # the product's one-line error, as the CLI prints it
                    print(exc, file=sys.stderr)
                    code = 2
        out[name] = [code, err.getvalue()]
    except BaseException as exc:
        out[name] = ["raised", type(exc).__name__]
print(json.dumps(out))
"""


def _sparse(path: Path, size: int = 8 << 30) -> Path:
    path.write_bytes(b"")
    os.truncate(path, size)
    return path


def _data_dir(root: Path, big: str) -> Path:
    """A flat data folder: the cached files, with ``big`` an 8 GiB sparse file."""
    root.mkdir()
    files = data_files()
    for name, path in {
        "db.json": files.db,
        "tasks.json": files.tasks,
        "split_tasks.json": files.split_tasks,
        "policy.md": files.policy,
        "simulation_guidelines.md": files.user_guidelines,
    }.items():
        if name == big:
            _sparse(root / name)
        else:
            (root / name).symlink_to(path)
    return root


def test_every_reader_refuses_an_8_gib_file_unread_under_a_2_gib_cap(tmp_path):
    small = tmp_path / "small.json"
    from airline_gym.cli.main import main

    assert main(["eval", "--agent", "noop", "--task-ids", "0", "--out", str(small)]) == 0
    big = str(_sparse(tmp_path / "big.json"))
    out = str(tmp_path / "out")
    noop = ["eval", "--agent", "noop", "--task-ids", "0"]
    cases = {
        "regrade": ["cli", ["regrade", big]],
        "compare": ["cli", ["compare", big, str(small)]],
        "report": ["cli", ["report", big, "--out", f"{out}.html"]],
        "audit-user": ["cli", ["audit-user", big]],
        "eval --resume": ["cli", [*noop, "--out", big, "--resume"]],
        "eval --tasks": ["cli", ["eval", "--agent", "noop", "--tasks", big, "--out", out]],
        "demo --tasks": ["cli", ["demo", "--tasks", big]],
        "regrade --task-id-map": ["cli", ["regrade", str(small), "--task-id-map", big]],
        "report --task-id-map": ["cli", ["report", str(small), "--task-id-map", big]],
        "audit-user --task-id-map": ["cli", ["audit-user", str(small), "--task-id-map", big]],
        "replay source": ["api", big],
    }
    data_cases = {}
    for name in ("db.json", "policy.md", "tasks.json", "simulation_guidelines.md"):
        folder = _data_dir(tmp_path / name.replace(".", "_"), name)
        args = [*noop, "--out", f"{out}-{name}.json"]
        if name == "simulation_guidelines.md":  # the LLM customer's (refused before a request)
            args += ["--user", "llm", "--user-model", "openai/c"]
            args += ["--user-api-base", "http://127.0.0.1:9/v1"]
        data_cases[name] = (folder, {name: ["cli", args]})
    env = {**os.environ, "PYTHONPATH": str(Path(airline_gym.__file__).parents[1])}
    runs = [(cases, env)] + [
        (more, {**env, "AIRLINE_GYM_DATA_DIR": str(folder)}) for folder, more in data_cases.values()
    ]
    seen = {}
    for batch, child_env in runs:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(batch)],
            capture_output=True,
            text=True,
            env=child_env,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        seen.update(json.loads(proc.stdout.splitlines()[-1]))
    assert set(seen) == set(cases) | set(data_cases)
    for name, (code, err) in seen.items():
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, (name, code, err)
        assert "8 GiB, over its limit of" in lines[0] and "refused unread" in lines[0], name
        assert "AIRLINE_GYM_MAX_FILE_MB" in lines[0], name


def test_limits_are_documented_and_the_override_raises_them(tmp_path, monkeypatch):
    text = tmp_path / "t.md"
    text.write_bytes(b"a\r\nb\rc\n")
    assert read_limited_text(text, TEXT_MAX_BYTES, "text file") == "a\nb\nc\n"
    over = _sparse(tmp_path / "over.json", RESULTS_MAX_BYTES + 1)
    with pytest.raises(FileTooLargeError, match=r"256\.0 MiB, over its limit of 256 MiB"):
        read_limited(over, RESULTS_MAX_BYTES, "results file")
    monkeypatch.setenv("AIRLINE_GYM_MAX_FILE_MB", "1")
    with pytest.raises(FileTooLargeError, match="over its limit of 1 MiB"):
        read_limited(_sparse(tmp_path / "two.json", 2 << 20), RESULTS_MAX_BYTES, "results file")
    assert read_limited(_sparse(tmp_path / "one.json", 1 << 20), 10, "x") == bytes(1 << 20)
    monkeypatch.setenv("AIRLINE_GYM_MAX_FILE_MB", "lots")
    with pytest.raises(ValueError, match="AIRLINE_GYM_MAX_FILE_MB='lots'"):
        read_limited(text, 10, "x")
    doc = Path(read_limited.__module__.replace(".", "/") + ".py")
    documented = (Path(airline_gym.__file__).parents[1] / doc).read_text()
    for limit in ("256 MiB", "64 MiB", "128 MiB", "16 MiB"):
        assert limit in documented


def test_a_device_without_a_size_is_refused_after_the_limit(monkeypatch):
    monkeypatch.setenv("AIRLINE_GYM_MAX_FILE_MB", "1")
    with pytest.raises(FileTooLargeError, match="over 1 MiB, over its limit of 1 MiB"):
        read_limited("/dev/zero", RESULTS_MAX_BYTES, "results file")


@pytest.mark.parametrize("value", ["\u00b2", "9" * 5000, "-1", "0", "1e3", "0x10", "1048577"])
def test_a_limit_that_is_not_a_whole_number_of_mib_is_one_line(value, monkeypatch, tmp_path):
    """``str.isdigit`` accepts "²" and ``int`` refuses it (and more than 4,300 digits)."""
    from cli_runner import one_line_error, run_cli

    tasks = tmp_path / "tasks.json"  # a file of its own: read now, not from a loaded set
    tasks.write_text(json.dumps([]), encoding="utf-8")
    monkeypatch.setenv("AIRLINE_GYM_MAX_FILE_MB", value)
    line = one_line_error(run_cli("tasks", "--tasks", str(tasks)))
    assert "AIRLINE_GYM_MAX_FILE_MB=" in line and "whole number of MiB" in line, line
    assert len(line) < 300, line
