"""Rollout collection on Ray: a local Ray instance, two actors, gold episodes over several tasks.

Ray start-up costs seconds, so everything that needs it shares one module fixture and one test.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import pickle
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from airline_gym.agents import GoldAgent, ScriptedAgent  # noqa: E402
from airline_gym.env.airline_env import AirlineEnv  # noqa: E402
from airline_gym.harness.export import episode_record  # noqa: E402
from airline_gym.harness.runner import run_episodes  # noqa: E402
from airline_gym.integrations import ray_rollouts  # noqa: E402

JOBS = [("17", 0), ("18", 1), ("3", 2), ("14", 3), ("17", 4)]
ENV_KWARGS = {"user": "scripted", "max_steps": 100}


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance for this module (no usage-stats reporting: tests stay offline)."""
    saved = os.environ.get("RAY_USAGE_STATS_ENABLED")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()
    if saved is None:
        os.environ.pop("RAY_USAGE_STATS_ENABLED", None)
    else:
        os.environ["RAY_USAGE_STATS_ENABLED"] = saved


def test_gold_episodes_on_two_workers_match_a_local_run(local_ray, tmp_path, capsys):
    local = run_episodes(lambda: AirlineEnv(**ENV_KWARGS), GoldAgent, JOBS)
    # collect() finds Ray running and leaves it alone (no ray.init with this bogus address)
    results = ray_rollouts.collect(
        JOBS, address="ray://unused:1", num_workers=2, env_kwargs=ENV_KWARGS, agent=GoldAgent
    )
    assert [(r.task_id, r.seed) for r in results] == JOBS
    assert all(r.reward == 1.0 and r.termination_reason == "agent_stop" for r in results)
    assert [r.messages for r in results] == [r.messages for r in local]
    assert [r.steps for r in results] == [r.steps for r in local]

    # a kept pool; an agent factory with arguments travels as a partial
    quitter = functools.partial(ScriptedAgent, [])
    with ray_rollouts.RolloutPool(2, ENV_KWARGS, quitter, concurrency=2) as pool:
        records = pool.collect(JOBS, as_records=True)
        assert [r["reward"] for r in records] == [0.0] * 5  # done at once: nothing changed
        assert records[0]["messages"][0] == episode_record(local[0])["messages"][0]
        pool.collect(JOBS[:1])
        # envs are reused across calls: at most `concurrency` per worker
        assert all(s["envs_built"] <= 2 for s in pool.stats())
        workers = pool.workers
    # the example script, on the same Ray instance
    out = tmp_path / "gold.jsonl"
    assert run_example(["--tasks", "17,3", "--seeds", "2", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task_id"], r["seed"]) for r in rows] == [("17", 0), ("17", 1), ("3", 0), ("3", 1)]
    assert all(r["reward"] == 1.0 for r in rows)
    assert "4 episodes on 2 workers" in capsys.readouterr().out
    assert pool.workers == [] and len(workers) == 2


def run_example(argv):
    path = Path(__file__).resolve().parents[2] / "examples" / "ray_rollouts.py"
    spec = importlib.util.spec_from_file_location("ray_rollouts_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(argv)


def test_worker_runs_without_ray_and_keeps_agent_errors():
    class Broken:
        def reset(self, info):
            pass

        def act(self, observation, info):
            from airline_gym.agents import AgentError

            raise AgentError("policy endpoint down")

    worker = pickle.loads(pickle.dumps(ray_rollouts.RolloutWorker(ENV_KWARGS, concurrency=1)))
    results = asyncio.run(worker.run(JOBS[:2]))
    assert [r.reward for r in results] == [1.0, 1.0] and worker.stats()["envs_built"] == 1
    failed = asyncio.run(ray_rollouts.RolloutWorker(ENV_KWARGS, Broken).run([("17", 0)]))[0]
    assert failed.termination_reason == "agent_error" and failed.reward == 0.0
    assert failed.error == "policy endpoint down" and failed.messages[0]["role"] == "system"
    with pytest.raises(ValueError):
        ray_rollouts.RolloutWorker(concurrency=0)
