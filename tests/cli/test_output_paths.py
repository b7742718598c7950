"""Where ``generate`` and ``warm-start`` write: only a regular file or a new path, never one of
their inputs, never two at once, whole or not at all (Ctrl-C included), and never a partial file
left beside it (issue 35, items 1-6)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runner import default_sigint, one_line_error, run_cli

from airline_gym.data import data_files
from airline_gym.data.output import OutputFile
from airline_gym.data.tau3 import tau3_files
from tests.users.intent_tasks import write_tasks

#: Generating leaves out the benchmarks' entities: it reads tau3's task file.
pytestmark = pytest.mark.usefixtures("tau3_for_module")


def _generate(out: str | Path, n: int = 2) -> subprocess.CompletedProcess[str]:
    return run_cli("generate", "--n", str(n), "--seed", "3", "--out", str(out))


def _warm_start(tasks: Path, out: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli("warm-start", "--tasks", str(tasks), "--out", str(out))


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tasks(tmp_path_factory.mktemp("tasks") / "tasks.json")


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("/proc/version", "cannot write --out /proc/version"),
        ("/proc/self/new-tasks.json", "cannot write --out /proc/self/new-tasks.json"),
        ("NAME" + "x" * 300 + ".json", "File name too long"),
        ("a-file/tasks.json", "Not a directory"),
        ("missing/tasks.json", "no such folder"),
        (".", "is a folder"),
    ],
)
def test_an_out_nothing_can_be_written_to_is_one_line_before_any_work(
    where: str, says: str, tmp_path: Path, tasks: Path
) -> None:
    (tmp_path / "a-file").write_text("keep", encoding="utf-8")
    out = where if where.startswith("/") else str(tmp_path / where)
    before = _listing(tmp_path)
    for done in (_generate(out), _warm_start(tasks, out)):
        line = one_line_error(done)
        assert says in line, line
        assert len(line) < 600, line
    assert _listing(tmp_path) == before
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_one_line(tmp_path: Path, tasks: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        for done in (_generate(folder / "t.json"), _warm_start(tasks, folder / "t.jsonl")):
            assert "Permission denied" in one_line_error(done)
        assert _listing(folder) == []
    finally:
        folder.chmod(0o755)


def _devices(folder: Path) -> dict[str, Path]:
    """Nodes that are not regular files: links to /dev/null and /dev/full, a fifo, a socket
    path, and (where allowed) a private copy of /dev/full."""
    nodes = {}
    for name in ("null", "full"):
        nodes[f"link to /dev/{name}"] = folder / f"dev-{name}"
        nodes[f"link to /dev/{name}"].symlink_to(f"/dev/{name}")
    nodes["fifo"] = folder / "fifo"
    os.mkfifo(nodes["fifo"])
    full = os.stat("/dev/full")
    try:
        os.mknod(folder / "full-copy", stat.S_IFCHR | 0o666, full.st_rdev)
        nodes["copy of /dev/full"] = folder / "full-copy"
    except PermissionError:  # not root: the links stand for it
        pass
    return nodes


def test_a_device_or_a_fifo_is_refused_and_stays_what_it_was(tmp_path: Path, tasks: Path) -> None:
    nodes = _devices(tmp_path)
    modes = {name: os.stat(path).st_mode for name, path in nodes.items()}
    for name, path in nodes.items():
        for done in (_generate(path), _warm_start(tasks, path)):
            line = one_line_error(done)
            assert "is a device" in line or "is a fifo" in line, (name, line)
        assert os.stat(path).st_mode == modes[name], name
        assert not stat.S_ISREG(os.stat(path).st_mode), name
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_link_planted_where_a_temp_file_could_be_is_never_written_through(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    out = tmp_path / "train.json"
    for name in (".train.json.tmp", ".train.json.0.tmp"):
        (tmp_path / name).symlink_to(victim)
    done = _generate(out)
    assert done.returncode == 0, done.stderr
    assert victim.read_text(encoding="utf-8") == "keep"
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 2
    assert stat.S_ISLNK(os.lstat(tmp_path / ".train.json.tmp").st_mode)


def test_an_out_that_is_an_input_is_refused_and_the_input_kept(
    tmp_path: Path, tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = data_files()
    inputs = [files.tasks, files.db, files.split_tasks, tau3_files().tasks]
    before = {path: _sha(path) for path in inputs}
    for path in inputs:
        assert "is one of this command's inputs" in one_line_error(_generate(path)), path
    assert {path: _sha(path) for path in inputs} == before
    link = tmp_path / "link.json"
    link.symlink_to(tasks)
    kept = _sha(tasks)
    monkeypatch.chdir(tasks.parent)
    for same in (
        tasks,
        "tasks.json",
        "./tasks.json",
        tasks.parent / ".." / tasks.parent.name / "tasks.json",
        link,
    ):
        line = one_line_error(_warm_start(tasks, same))
        assert "is one of this command's inputs" in line, (same, line)
    assert _sha(tasks) == kept
    assert "is one of this command's inputs" in one_line_error(_warm_start(link, tasks))


def test_a_second_writer_of_one_out_is_refused_at_once(tmp_path: Path, tasks: Path) -> None:
    out = tmp_path / "train.json"
    out.write_text("[]\n", encoding="utf-8")
    with OutputFile(out) as writing:  # another command is writing it
        for done in (_generate(out), _warm_start(tasks, out)):
            assert "is being written by another airline-gym command" in one_line_error(done)
        writing.cancel()
    assert out.read_text(encoding="utf-8") == "[]\n"
    assert _listing(tmp_path) == ["train.json"]


def _popen(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "airline_gym.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )


def _wait_for(process: subprocess.Popen[str], word: str) -> str:
    """Read stderr until a line with ``word`` (the work has started)."""
    assert process.stderr is not None
    seen = ""
    while word not in seen:
        line = process.stderr.readline()
        assert line, (process.poll(), seen)
        seen += line
    return seen


def test_two_generates_at_once_give_one_whole_file_and_one_line(tmp_path: Path) -> None:
    out = tmp_path / "train.json"
    first = _popen("generate", "--n", "400", "--seed", "1", "--out", out)
    try:
        _wait_for(first, "generated")
        second = _generate(out)
        assert "is being written by another" in one_line_error(second)
        _, err = first.communicate(timeout=300)
    finally:
        first.kill()
    assert first.returncode == 0, err
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 400
    assert _listing(tmp_path) == ["train.json"]


def test_ctrl_c_in_generate_keeps_out_and_leaves_no_temp_file(tmp_path: Path) -> None:
    out = tmp_path / "train.json"
    out.write_text("[]\n", encoding="utf-8")
    process = _popen("generate", "--n", "5000", "--out", out)
    try:
        _wait_for(process, "generated")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == f"interrupted: nothing written ({out} left as it was)"
    assert "Traceback" not in err
    assert out.read_text(encoding="utf-8") == "[]\n"
    assert _listing(tmp_path) == ["train.json"]


def test_ctrl_c_in_warm_start_stops_within_a_second_or_two(tmp_path: Path, tasks: Path) -> None:
    """2,000 episodes take about 15 s: before the fix, Ctrl-C ended the command only once every
    one was played."""
    records = json.loads(tasks.read_text(encoding="utf-8"))
    many = [{**records[i % len(records)], "id": f"t{i}"} for i in range(2000)]
    big = tmp_path / "many.json"
    big.write_text(json.dumps(many), encoding="utf-8")
    out = tmp_path / "sft.jsonl"
    out.write_text("earlier rows\n", encoding="utf-8")
    process = _popen("warm-start", "--tasks", big, "--out", out)
    try:
        _wait_for(process, "played")
        asked = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        took = time.monotonic() - asked
    finally:
        process.kill()
    assert process.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted after ") and "of 2000 episodes: nothing written" in last
    assert took < 3.0, took
    assert out.read_text(encoding="utf-8") == "earlier rows\n"
    assert _listing(tmp_path) == ["many.json", "sft.jsonl"]


def test_eval_refuses_such_an_out_in_one_line_too(tmp_path: Path) -> None:
    """eval's results go through the same checks (its journal's name included); a missing
    folder is still made for it."""
    run = ["eval", "--agent", "noop", "--task-ids", "0"]
    (tmp_path / "null").symlink_to("/dev/null")
    refused = {
        str(tmp_path / ("r" * 251)): "cannot write --out's journal",
        str(tmp_path / ("r" * 300)): "File name too long",
        str(tmp_path / "null"): "is a device",
    }
    for out, says in refused.items():
        for resume in ([], ["--resume"]):
            line = one_line_error(run_cli(*run, "--out", out, *resume))
            assert says in line, line
    assert _listing(tmp_path) == ["null"]
    done = run_cli(*run, "--out", str(tmp_path / "new" / "r.json"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "new" / "r.json").is_file()
