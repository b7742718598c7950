"""The lock between processes (``airline_gym/file_lock.py``): exclusive, and its file is removed
after use, by a run, by the data cache, and after a killed holder."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from airline_gym.data import cache_dir
from airline_gym.file_lock import LockBusy, exclusive
from airline_gym.harness.evaluate import EvalConfig, evaluate


def test_the_lock_file_is_made_with_its_folder_and_removed_after_use(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "run.lock"
    with exclusive(lock, timeout=0):
        assert lock.is_file()
        with pytest.raises(LockBusy), exclusive(lock, timeout=0):
            pass  # another holder at once: refused
    assert not lock.exists()
    with exclusive(lock, timeout=0):  # free again
        assert lock.is_file()
    assert list(lock.parent.iterdir()) == []


def test_a_waiter_on_the_removed_file_takes_the_new_one_and_holders_never_overlap(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "x.lock"
    inside: list[int] = []
    overlaps: list[str] = []

    def hold(n: int) -> None:
        with exclusive(lock, timeout=30, poll=0.001):
            inside.append(n)
            if len(inside) > 1:
                overlaps.append(f"{inside}")
            time.sleep(0.005)
            inside.remove(n)

    threads = [threading.Thread(target=hold, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert overlaps == [] and not lock.exists()


def test_a_killed_holders_file_is_reused_and_removed(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    code = (
        "import os, sys, time\n"
        "from airline_gym.file_lock import exclusive\n"
        "with exclusive(sys.argv[1], timeout=5):\n"
        "    print('held', flush=True); time.sleep(60)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        with pytest.raises(LockBusy), exclusive(lock, timeout=0.2):
            pass
        child.kill()
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
        if child.stdout is not None:
            child.stdout.close()
    assert lock.is_file()  # the kernel dropped the lock, the file stayed
    with exclusive(lock, timeout=0):
        pass
    assert not lock.exists()


def test_an_eval_leaves_no_lock_file(tmp_path: Path) -> None:
    locks = cache_dir().parent / "locks"
    before = set(os.listdir(locks)) if locks.is_dir() else set()
    out = tmp_path / "run.json"
    evaluate("noop", EvalConfig(task_ids=["0"]), out=out)
    evaluate("noop", EvalConfig(task_ids=["0", "1"]), out=out, resume=True)
    assert out.is_file()
    after = set(os.listdir(locks)) if locks.is_dir() else set()
    assert after - before == set()
