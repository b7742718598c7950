"""eval under Ctrl-C and file-system faults: one line, a non-zero exit, nothing saved is lost."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli, default_sigint, one_line_error

from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.results import Results
from airline_gym.testing import OpenAIServer, Reply


def _start(*args: str, **kw: Any) -> subprocess.Popen[str]:
    kw.setdefault("preexec_fn", default_sigint)
    return subprocess.Popen(
        [sys.executable, "-m", "airline_gym.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        **kw,
    )


def _wait_for(condition: Any, proc: subprocess.Popen[str], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _interrupt(proc: subprocess.Popen[str]) -> tuple[float, str]:
    """SIGINT; (seconds until the process ended, its stderr)."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return time.monotonic() - sent, err


def _journal_lines(journal: Path) -> list[dict[str, Any]]:
    """The journal's whole lines (a torn last one, cut by a failed write, is not a line)."""
    text = journal.read_text(encoding="utf-8")
    return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines()]


def _pairs(path: Path) -> list[tuple[str, int]]:
    return sorted((str(s["task_id"]), int(s["trial"])) for s in Results.load(path).simulations)


def test_ctrl_c_stops_starting_episodes_and_resume_finishes_the_run(tmp_path: Path) -> None:
    out, journal = tmp_path / "run.json", tmp_path / "run.json.journal"
    args = ["eval", "--agent", "random", "--task-ids", "0,1,2,3,4", "--trials", "30"]
    proc = _start(*args, "--out", str(out))
    _wait_for(lambda: journal.exists() and journal.read_text().count("\n") > 5, proc)
    seconds, err = _interrupt(proc)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert seconds < 5, seconds  # the episodes are milliseconds each: it stops at once
    saved = len(_journal_lines(journal)) - 1
    assert saved < 150 and not out.exists()
    assert err.strip().splitlines()[-1] == (
        f"interrupted: {saved} of 150 simulations saved in {journal}; run the same command "
        "with --resume to play the rest"
    )
    done = cli(*args, "--out", out, "--resume")
    assert done.returncode == 0, done.stderr
    pairs = _pairs(out)
    assert pairs == sorted({(t, n) for t in "01234" for n in range(30)}) and not journal.exists()


def test_ctrl_c_abandons_episodes_stuck_on_a_model_within_the_grace_period(tmp_path: Path) -> None:
    out, journal = tmp_path / "run.json", tmp_path / "run.json.journal"
    with OpenAIServer(default=Reply(fault="hang", hang_seconds=60)) as server:
        proc = _start(
            "eval", "--agent-model", "openai/agent", "--api-base", server.base_url,
            "--task-ids", "0,1,2,3", "--concurrency", "4", "--out", str(out),
        )  # fmt: skip
        _wait_for(lambda: len(server.requests) >= 4, proc)
        seconds, err = _interrupt(proc)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert seconds < 6, seconds  # 1.5 s of grace, then the four hanging requests are dropped
    assert (
        err.strip().splitlines()[-1] == "interrupted: 0 of 4 simulations saved (nothing to resume)"
    )
    assert not journal.exists() and not out.exists()  # nothing saved: nothing blocks a rerun


def test_ctrl_c_while_starting_up_prints_no_traceback(tmp_path: Path) -> None:
    # 5,000 simulations: the run cannot end before the interrupt arrives, even on a loaded machine
    args = ("eval", "--agent", "noop", "--trials", "100", "--out", str(tmp_path / "r.json"))
    proc = _start("-vv", *args)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    while line and not line.startswith("DEBUG "):  # the first log line: main() loads the run
        line = proc.stderr.readline()
    seconds, err = _interrupt(proc)
    assert proc.returncode == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines()[-1].startswith("interrupted")


def _limit_file_size(limit: int) -> Any:
    def apply() -> None:  # in the child: a write past `limit` bytes fails with EFBIG (errno 27)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_full_disk_while_journaling_is_one_line_and_resume_loses_nothing(tmp_path: Path) -> None:
    out, journal = tmp_path / "run.json", tmp_path / "run.json.journal"
    args = ["eval", "--agent", "noop", "--trials", "3", "--out", str(out)]
    proc = _start(*args, preexec_fn=_limit_file_size(200_000))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "Traceback" not in err, err[-3000:]
    line = err.strip().splitlines()[-1]  # after a line of progress per simulation saved
    assert line.startswith(f"airline-gym eval: error: cannot journal a simulation ({journal}): ")
    assert "File too large" in line and "resume" in line
    saved = len(_journal_lines(journal)) - 1  # a torn last line is not counted: resume drops it
    assert 0 < saved < 150 and not out.exists()
    assert cli(*args, "--resume").returncode == 0
    assert _pairs(out) == sorted({(str(t), n) for t in range(50) for n in range(3)})


def test_a_full_disk_for_the_results_file_keeps_the_old_file_and_the_journal(
    tmp_path: Path,
) -> None:
    out, journal = tmp_path / "run.json", tmp_path / "run.json.journal"
    args = ["eval", "--agent", "noop", "--out", str(out), "--resume"]
    assert cli(*args).returncode == 0
    before = out.read_bytes()
    limit = len(before) + len(before) // 2  # room for the journal of one more trial, not the file
    proc = _start(*args, "--trials", "2", preexec_fn=_limit_file_size(limit))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "Traceback" not in err, err[-3000:]
    line = err.strip().splitlines()[-1]  # after a line of progress per simulation saved
    assert f"cannot write the results file ({out}): File too large" in line
    assert out.read_bytes() == before and len(_journal_lines(journal)) == 51
    assert cli(*args, "--trials", "2").returncode == 0
    assert len(_pairs(out)) == 100 and not journal.exists()


def test_paths_that_cannot_hold_a_results_file_are_one_line(tmp_path: Path) -> None:
    base = ["eval", "--agent", "noop", "--task-ids", "0"]
    (tmp_path / "file").write_text("x")
    line = one_line_error(cli(*base, "--out", tmp_path / "file" / "run.json"))
    assert "cannot create the folder" in line and str(tmp_path / "file") in line
    (tmp_path / "dir.json").mkdir()
    for extra in ([], ["--resume"]):
        line = one_line_error(cli(*base, "--out", tmp_path / "dir.json", *extra))
        assert f"--out {tmp_path / 'dir.json'} is a directory" in line
    (tmp_path / "j.json.journal").mkdir()
    line = one_line_error(cli(*base, "--out", tmp_path / "j.json", "--resume"))
    assert f"{tmp_path / 'j.json.journal'} is not a file" in line
    # read-only: a chmod'ed folder, or for root (who may write anyway) the proc file system
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(0o500)
    target = Path("/proc/run.json") if os.geteuid() == 0 else readonly / "run.json"
    try:
        done = cli(*base, "--out", target)
    finally:
        readonly.chmod(0o700)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and str(target) in done.stderr


def test_out_through_a_symlink_writes_the_linked_file(tmp_path: Path) -> None:
    target, link = tmp_path / "target.json", tmp_path / "link.json"
    assert cli("eval", "--agent", "noop", "--task-ids", "0,1", "--out", target).returncode == 0
    link.symlink_to(target)
    args = ["eval", "--agent", "noop", "--task-ids", "0,1,2", "--out", link, "--resume"]
    assert cli(*args).returncode == 0
    assert link.is_symlink() and link.resolve() == target
    assert _pairs(target) == [("0", 0), ("1", 0), ("2", 0)]


def test_a_run_that_fails_before_any_episode_leaves_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "run.json"

    def broken_progress(sim: Any, done: int, total: int, results: Any) -> None:
        raise RuntimeError("the progress display broke")

    with pytest.raises(RuntimeError, match="display broke"):
        evaluate("noop", EvalConfig(task_ids=["0"]), out=out, progress=broken_progress)
    assert list(tmp_path.iterdir()) == []  # no journal blocks the next call
    evaluate("noop", EvalConfig(task_ids=["0"]), out=out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]  # and no lock file
