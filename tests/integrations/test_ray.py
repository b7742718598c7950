"""Rollout collection on a real local Ray: dynamic balancing, in-process equality, the examples.

Ray start-up costs seconds, so the module starts it once (two CPUs, no dashboard) and every test
shares it; each pool is two actors.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import pickle
import sys
import time
from pathlib import Path

import pytest

if os.environ.get("CI"):  # CI installs the extra: a missing library must fail, not skip
    import ray
else:
    ray = pytest.importorskip("ray")

from airline_gym.agents import GoldAgent, NoOpAgent, ScriptedAgent
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.harness.export import episode_record
from airline_gym.harness.runner import run_episodes
from airline_gym.integrations import ray_rollouts

sys.path.insert(0, str(Path(__file__).parent))
from readme_examples import run_example

#: Ray's dashboard asks cloud metadata endpoints which cloud it runs on, whatever ray.init is
#: told: the guard blocks those requests; they do not fail these tests.
pytestmark = pytest.mark.cloud_probes

JOBS = [("17", 0), ("18", 1), ("3", 2), ("14", 3), ("17", 4)]
ENV_KWARGS = {"user": "scripted", "max_steps": 100}
SLOW_SECONDS = 2.0


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance for this module (no usage-stats reporting: tests stay offline)."""
    saved = os.environ.get("RAY_USAGE_STATS_ENABLED")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    # the actors unpickle this module's agents by value: Ray's workers cannot import tests/
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    if started:
        ray.shutdown()
    if saved is None:
        os.environ.pop("RAY_USAGE_STATS_ENABLED", None)
    else:
        os.environ["RAY_USAGE_STATS_ENABLED"] = saved


class LateAgent(NoOpAgent):
    """Ends the episode at once, but first awaits ``delays[task_id]`` seconds (a slow LLM)."""

    def __init__(self, delays: dict[str, float]) -> None:
        super().__init__()
        self.delays = delays
        self.delay = 0.0

    def reset(self, info):
        super().reset(info)
        self.delay = self.delays.get(str(info["task_id"]), 0.0)

    async def aact(self, observation, info):
        await asyncio.sleep(self.delay)
        return self.act(observation, info)


@pytest.fixture(scope="module")
def pool(local_ray):
    """Two actors with one slot each, kept for the module (each test passes its own agent)."""
    with ray_rollouts.RolloutPool(2, ENV_KWARGS, NoOpAgent, concurrency=1) as kept:
        kept.stats()  # the actors are up
        yield kept


def played(pool, before) -> list[int]:
    """Episodes each worker played since the ``before`` stats."""
    return [a["episodes"] - b["episodes"] for a, b in zip(pool.stats(), before, strict=True)]


def summary(results) -> list[tuple]:
    return [(r.task_id, r.seed, r.reward, r.termination_reason, r.messages) for r in results]


@pytest.mark.long  # Ray's start-up alone is 6-20 s here
def test_thousands_of_episodes_keep_every_worker_busy(pool, tau2_tasks):
    ids = [t.id for t in tau2_tasks]
    jobs = [(ids[i % len(ids)], i) for i in range(2000)]
    before = pool.stats()
    start = time.perf_counter()
    results = pool.collect(jobs, chunk_size=20)
    seconds = time.perf_counter() - start
    counts = played(pool, before)
    assert [(r.task_id, r.seed) for r in results] == jobs  # job order, the job's seed
    assert sum(counts) == 2000 and min(counts) >= 200, counts  # every worker pulled work
    # every 7th job (all 50 tasks, many seeds) replayed in process: the same episode
    sample = jobs[::7]
    local = run_episodes(lambda: AirlineEnv(**ENV_KWARGS), NoOpAgent, sample)
    assert summary(results[::7]) == summary(local)
    by_task = {r.task_id: r.reward for r in local}
    assert [r.reward for r in results] == [by_task[t] for t, _ in jobs]  # quitting: task-bound
    assert 0 < sum(by_task.values()) < len(by_task)
    print(f"\n2000 episodes on 2 workers in {seconds:.1f} s; episodes per worker {counts}")


@pytest.mark.long  # Ray's start-up alone is 6-20 s here
def test_a_slow_episode_does_not_hold_back_the_others(pool, tau2_tasks):
    """One slot per worker; job 0 is slow. A static split would queue half the jobs behind it."""
    fast = [t.id for t in tau2_tasks if t.id != "3"]
    jobs = [("3", 0)] + [(fast[i % len(fast)], i) for i in range(1, 31)]
    before = pool.stats()
    start = time.perf_counter()
    results = pool.collect(jobs, agent=functools.partial(LateAgent, {"3": SLOW_SECONDS}))
    seconds = time.perf_counter() - start
    counts = sorted(played(pool, before))
    slow, rest = results[0], results[1:]
    assert slow.duration >= SLOW_SECONDS and all(r.duration < SLOW_SECONDS for r in rest)
    # the other worker played every fast job while the slow one was still running
    assert counts == [1, len(rest)]
    assert max(r.end_time for r in rest) < slow.end_time  # ISO times: the order is the text's
    assert seconds < SLOW_SECONDS + 1.5  # the slow episode's time, not a shard's sum
    local = run_episodes(lambda: AirlineEnv(**ENV_KWARGS), NoOpAgent, jobs)
    assert summary(results) == summary(local)
    print(f"\nskewed batch: {seconds:.2f} s for a {SLOW_SECONDS} s episode + 30 fast; {counts}")


@pytest.mark.long  # Ray's start-up alone is 6-20 s here
def test_a_kept_pool_reuses_its_envs_and_takes_agent_factories(pool):
    gold = pool.collect(JOBS, agent=GoldAgent)
    assert [(r.task_id, r.seed) for r in gold] == JOBS and all(r.reward == 1.0 for r in gold)
    local = run_episodes(lambda: AirlineEnv(**ENV_KWARGS), GoldAgent, JOBS)
    assert summary(gold) == summary(local)
    quitter = functools.partial(ScriptedAgent, [])  # a factory with arguments travels too
    records = pool.collect(JOBS, as_records=True, agent=quitter)
    assert [r["reward"] for r in records] == [0.0] * 5  # done at once: nothing changed
    assert records[0]["messages"][0] == episode_record(gold[0])["messages"][0]
    assert pool.collect(JOBS[:1])[0].termination_reason == "agent_stop"  # the pool's NoOpAgent
    assert all(s["envs_built"] == 1 for s in pool.stats())  # one slot, one env, reused


@pytest.mark.long  # Ray's start-up alone is 6-20 s here
def test_readme_example_and_script_on_the_running_ray(local_ray, tmp_path, capsys):
    namespace = run_example("ray")  # collect() finds Ray running and uses it
    jobs = namespace["jobs"]
    local = run_episodes(lambda: AirlineEnv(user="scripted"), GoldAgent, jobs)
    assert summary(namespace["results"]) == summary(local)
    printed = capsys.readouterr().out
    assert printed.strip() == str([(t, s, 1.0) for t, s in jobs])
    # collect() leaves a running Ray alone: the script's bogus address is never dialled
    out = tmp_path / "gold.jsonl"
    argv = ["--task-ids", "17,3", "--seeds", "2", "--out", str(out), "--address", "ray://unused:1"]
    argv += ["--chunk-size", "3", "--num-workers", "1"]  # chunks of 3 and 1 jobs; one actor
    assert run_script(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task_id"], r["seed"]) for r in rows] == [("17", 0), ("17", 1), ("3", 0), ("3", 1)]
    assert all(r["reward"] == 1.0 for r in rows)
    assert "4 episodes, 1 Ray worker(s), " in capsys.readouterr().out


def run_script(argv):
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
    start, played = asyncio.run(worker.play(7, JOBS[2:3]))  # a second event loop: a new gate
    assert start == 7 and played[0].task_id == "3" and worker.stats()["episodes"] == 3
    failed = asyncio.run(ray_rollouts.RolloutWorker(ENV_KWARGS, Broken).run([("17", 0)]))[0]
    assert failed.termination_reason == "agent_error" and failed.reward == 0.0
    assert failed.error == "policy endpoint down" and failed.messages[0]["role"] == "system"
    for bad in ({"concurrency": 0}, {"chunk_size": 0}, {"num_workers": 0}):
        with pytest.raises(ValueError, match="at least 1"):
            ray_rollouts.RolloutPool(**bad)
    with pytest.raises(ValueError):
        ray_rollouts.RolloutWorker(concurrency=0)


# --- benchmark versions ---------------------------------------------------------------------------
@pytest.mark.long  # Ray's start-up alone is 6-20 s here
def test_tau3_rollouts_play_tau3_tasks_with_tau3_s_customer(local_ray, tau3, tmp_path):
    import tau3_case as case

    agent = functools.partial(ScriptedAgent, case.gold_messages())
    with case.customer_server() as customer:
        results = ray_rollouts.collect(
            [(case.TASK, 0), (case.TASK, 1)],
            num_workers=1,
            env_kwargs=case.customer_kwargs(customer),
            agent=agent,
            benchmark="tau3",
        )
    assert [(r.task_id, r.seed, r.termination_reason) for r in results] == [
        (case.TASK, 0, "agent_stop"),
        (case.TASK, 1, "agent_stop"),
    ]
    assert [r.reward for r in results] == [case.check_grades_differ()] * 2 == [1.0, 1.0]
    case.assert_tau3_customer(customer.requests)
    # the example script with --benchmark tau3: its gold agent plays tau3's gold (1.0, not 0.0)
    out = tmp_path / "tau3.jsonl"
    argv = ["--benchmark", "tau3", "--task-ids", case.TASK, "--out", str(out)]
    assert run_script([*argv, "--num-workers", "1"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task_id"], r["reward"]) for r in rows] == [(case.TASK, 1.0)]


def test_the_default_gold_agent_plays_the_gold_of_the_env_s_benchmark(tau3):
    """tau3's task 7: its own gold scores 1; tau2's gold (what GoldAgent() loads) scores 0."""
    worker = ray_rollouts.RolloutWorker({"user": "scripted", "benchmark": "tau3"})
    (result,) = asyncio.run(worker.run([("7", 0)]))
    assert result.reward == 1.0 and result.termination_reason == "agent_stop"
    (by_class,) = asyncio.run(worker.run([("7", 0)], agent=GoldAgent))
    assert by_class.reward == 1.0  # GoldAgent the class: the env's gold again
    (explicit,) = asyncio.run(worker.run([("7", 0)], agent=functools.partial(GoldAgent, "tau2")))
    assert explicit.reward == 0.0  # tau2's gold on tau3's task 7


def test_a_bad_benchmark_is_refused_before_any_actor(monkeypatch):
    from airline_gym.errors import ConfigError

    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("Ray was started"))
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    for kwargs, said in (
        ({"benchmark": "tau4"}, "benchmark must be one of tau2, tau3; got 'tau4'"),
        ({"env_kwargs": {"benchmark": "tau4"}}, "benchmark must be one of tau2, tau3; got 'tau4'"),
        (
            {"env_kwargs": {"benchmark": "tau2"}, "benchmark": "tau3"},
            "benchmark 'tau3' contradicts env_kwargs' 'tau2'",
        ),
    ):
        with pytest.raises(ConfigError) as refused:
            ray_rollouts.collect([("7", 0)], **kwargs)
        assert str(refused.value) == said


def test_the_workers_play_the_protocol_their_env_kwargs_name():
    """``env_kwargs={"protocol": "tool-reply"}`` (TRL's): the gold agent reaches the customer
    through respond_to_user and still scores 1; the rows carry that protocol's tools."""
    kwargs = {**ENV_KWARGS, "protocol": "tool-reply"}
    results = asyncio.run(ray_rollouts.RolloutWorker(kwargs, concurrency=1).run(JOBS[:2]))
    assert [r.reward for r in results] == [1.0, 1.0]
    for result in results:
        assert "respond_to_user" in [t["function"]["name"] for t in result.tools]
        texts = [m for m in result.messages[2:] if m["role"] == "assistant" and m.get("content")]
        assert not texts  # after the greeting the agent only calls tools
