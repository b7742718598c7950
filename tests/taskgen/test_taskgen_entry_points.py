"""Every entry point that takes ``tasks=`` / ``--tasks`` takes a generated file: gym.make, eval,
regrade, audit, tasks, show, play, serve, and every trainer adapter's dataset rows."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from taskgen_files import generated_file, generated_records

import airline_gym  # noqa: F401  (registers the env ids)
from airline_gym.agents import GoldAgent
from airline_gym.harness.runner import run_episode
from airline_gym.integrations.task_rows import ROW_FORMATS, dataset_rows

#: Generating leaves out the benchmarks' entities: it reads tau3's task file.
pytestmark = pytest.mark.usefixtures("tau3_for_module")


def _cli(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _ids() -> list[str]:
    return [r["id"] for r in generated_records()]


def gym_make(path: Path, tmp: Path) -> None:
    env = gym.make("AirlineScripted-v0", tasks=str(path), disable_env_checker=True)
    task_id = _ids()[1]
    result = run_episode(env.unwrapped, GoldAgent(str(path)), task_id, seed=0)
    assert result.reward_info["reward"] == 1.0


def eval_and_regrade(path: Path, tmp: Path) -> None:
    out = tmp / "results.json"
    done = _cli("eval", "--agent", "gold", "--tasks", path, "--out", out)
    assert done.returncode == 0, done.stderr
    sims = json.loads(out.read_text())["simulations"]
    assert sorted(s["task_id"] for s in sims) == sorted(_ids())
    assert all(s["reward_info"]["reward"] == 1.0 for s in sims)
    regraded = _cli("regrade", out, "--json")
    assert regraded.returncode == 0, regraded.stderr
    rows = [json.loads(line) for line in regraded.stdout.splitlines()]
    assert sorted(r["task_id"] for r in rows) == sorted(_ids())
    assert all(r["agrees"] for r in rows)


def audit(path: Path, tmp: Path) -> None:
    done = _cli("audit", "--tasks", path, "--json")
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)["counts"]
    assert counts["gold"] == len(_ids()) and counts["noop"] == 0 and counts["transfer"] == 0


def tasks(path: Path, tmp: Path) -> None:
    done = _cli("tasks", "--tasks", path, "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [t["id"] for t in listed] == _ids()
    assert all(t["kinds"] for t in listed)


def show(path: Path, tmp: Path) -> None:
    task_id = _ids()[0]
    done = _cli("show", task_id, "--tasks", path, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"] == task_id


def play(path: Path, tmp: Path) -> None:
    record = generated_records()[0]
    lines = [
        json.dumps({"name": a["name"], "arguments": a["arguments"]})
        for a in record["evaluation_criteria"]["actions"]
    ]
    said = record["evaluation_criteria"]["communicate_info"]
    if said:
        lines.append("To confirm: " + ", ".join(said))
    done = _cli("play", "--task", record["id"], "--tasks", path, stdin="\n".join([*lines, ":done"]))
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("reward=1.0"), done.stdout[-500:]


def serve(path: Path, tmp: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "integrations"))
    from extras import require

    require("openenv", "uvicorn")
    from openenv_servers import server_process

    task_id = _ids()[2]
    with server_process("--tasks", str(path)) as server:
        request = urllib.request.Request(
            server.url + "/reset",
            data=json.dumps({"task": task_id, "seed": 0}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            body = json.loads(response.read())
    assert task_id in json.dumps(body)


def rows(path: Path, tmp: Path) -> None:
    for row_format in ROW_FORMATS:
        made = dataset_rows(row_format, tasks=str(path))  # default split: train
        ids = [r.get("task_id") or r["extra_info"]["task_id"] for r in made]
        assert ids == _ids(), row_format


ENTRY_POINTS: dict[str, Callable[[Path, Path], None]] = {
    "gym.make": gym_make,
    "eval+regrade": eval_and_regrade,
    "audit": audit,
    "tasks": tasks,
    "show": show,
    "play": play,
    "serve": serve,
    "dataset_rows": rows,
}


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_every_entry_point_takes_a_generated_file(
    name: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = generated_file(tmp_path_factory.getbasetemp())
    ENTRY_POINTS[name](path, tmp_path)
