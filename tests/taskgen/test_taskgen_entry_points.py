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
from airline_gym.agents.dialogue_gold import DialogueGoldAgent, dialogue_plan
from airline_gym.domain.tasks import load_task_set
from airline_gym.harness.runner import run_episode
from airline_gym.integrations.task_rows import ROW_FORMATS, dataset_rows
from airline_gym.taskgen.generate import generate
from airline_gym.taskgen.output import write_tasks
from airline_gym.users.intent_source import task_intent

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
    result = run_episode(env.unwrapped, DialogueGoldAgent(str(path)), task_id, seed=0)
    assert result.reward_info["reward"] == 1.0


def eval_and_regrade(path: Path, tmp: Path) -> None:
    """eval records the strict grade, and regrade tells the same one: 1 for the gold dialogue,
    and for the bare gold calls the same mix of 0 (an unconfirmed write) and 1 (a question
    alone: one is added to the 24 tasks of seed 7, whatever the mix makes of those)."""
    records = [*generated_records(24, 7), *generate(1, 8, kinds=["info"]).records]
    path = tmp / "generated-with-a-question.json"
    write_tasks(records, path)
    ids = [r["id"] for r in records]
    for agent, everywhere in (("gold-dialogue", 1.0), ("gold", None)):
        out = tmp / f"results-{agent}.json"
        done = _cli("eval", "--agent", agent, "--tasks", path, "--out", out)
        assert done.returncode == 0, done.stderr
        sims = json.loads(out.read_text())["simulations"]
        assert sorted(s["task_id"] for s in sims) == sorted(ids)
        rewards = {s["reward_info"]["reward"] for s in sims}
        assert rewards == ({everywhere} if everywhere else {0.0, 1.0}), agent
        if everywhere is None:  # why a reward is 0: the failed checks, in the file
            failed = [s for s in sims if s["reward_info"]["reward"] == 0.0]
            assert all(
                not all(c["met"] for c in s["reward_info"]["info"]["strict"]) for s in failed
            )
        regraded = _cli("regrade", out, "--json")
        assert regraded.returncode == 0, regraded.stderr
        rows = [json.loads(line) for line in regraded.stdout.splitlines()]
        assert sorted(r["task_id"] for r in rows) == sorted(ids)
        assert all(r["agrees"] for r in rows), agent


def audit(path: Path, tmp: Path) -> None:
    done = _cli("audit", "--tasks", path, "--json", "--agents", "none")
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)["counts"]
    assert counts["gold-dialogue"] == len(_ids())
    assert counts["noop"] == 0 and counts["transfer"] == 0


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
    """The gold dialogue typed in: each proposal, the customer's yes, the call, the answer."""
    record = generated_records()[0]
    task = load_task_set(str(path))[record["id"]]
    lines = []
    for action in dialogue_plan(task, task_intent(task)):
        for call in action.get("tool_calls") or []:
            function = call["function"]
            lines.append(
                json.dumps(
                    {"name": function["name"], "arguments": json.loads(function["arguments"])}
                )
            )
        if not action.get("tool_calls"):
            lines.append(action["content"])
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
