"""Async rollouts: many episodes in flight in one process, bounded by a semaphore."""

from __future__ import annotations

import asyncio
import threading
import time

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401
from airline_gym.agents import GoldAgent, text_message
from airline_gym.env import AirlineEnv
from airline_gym.harness.runner import arun_episodes, run_episodes
from airline_gym.testing.openai_server import OpenAIServer, Reply


def test_gold_agent_over_every_task_concurrently_scores_1(tau2_tasks):
    jobs = [(t.id, i) for i, t in enumerate(tau2_tasks)]
    results = run_episodes(
        lambda: AirlineEnv(user="scripted"), lambda: GoldAgent(tau2_tasks), jobs, 16
    )
    assert [r.task_id for r in results] == [t.id for t in tau2_tasks]
    # a customer playing an intent hangs up once its question is answered
    assert all(r.reward == 1.0 for r in results)
    assert {r.termination_reason for r in results} <= {"agent_stop", "user_stop"}


def test_async_and_sync_give_the_same_transcripts(tau2_tasks):
    env = AirlineEnv(user="scripted")
    agent = GoldAgent(tau2_tasks)
    sync_messages = []
    for task_id in ("14", "18"):
        obs, info = env.reset(seed=3, options={"task": task_id})
        agent.reset(info)
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
        sync_messages.append(info["messages"])
    results = run_episodes(
        lambda: AirlineEnv(user="scripted"),
        lambda: GoldAgent(tau2_tasks),
        [("14", 3), ("18", 3)],
        2,
    )
    assert [r.messages for r in results] == sync_messages


class GatedCustomer:
    """Holds every reply until ``target`` requests are in flight at once, then answers each after
    ``delay``; records the peak number in flight.

    The gate, not a race between sleeps and the machine's speed, decides the overlap: on a loaded
    machine starting 100 episodes can take longer than a fixed sleep. Episodes that cannot
    overlap (the waits serialized) never open it: it opens after ``patience`` seconds anyway,
    with the peak far below the target. ``delay`` leaves time for requests beyond the
    concurrency limit, if any were let through, to arrive and be counted.
    """

    def __init__(self, target: int, delay: float, patience: float = 120.0) -> None:
        self.target, self.delay, self.patience = target, delay, patience
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()
        self.gate = threading.Event()

    def __call__(self, request: dict) -> Reply:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            if self.in_flight >= self.target:
                self.gate.set()
        self.gate.wait(self.patience)
        self.gate.set()  # waited in vain: the run goes on (and fails on its peak)
        time.sleep(self.delay)
        with self.lock:
            self.in_flight -= 1
        said = sum(m["role"] == "assistant" for m in request["messages"])
        return Reply(content="I am omar_rossi_1241." if said == 0 else "Thanks ###STOP###")


class TalkOnce:
    def reset(self, info):
        pass

    def act(self, observation, info):
        return text_message("All set. Anything else?")


@pytest.mark.parametrize("concurrency", [100])
def test_hundreds_of_llm_waits_overlap_within_the_concurrency_limit(concurrency):
    customer = GatedCustomer(target=concurrency, delay=0.3)
    with OpenAIServer(customer) as server:
        args = {"api_base": server.base_url, "api_key": "sk-test", "backoff": 0.01}

        def make_env():
            return AirlineEnv(task=17, user="llm", user_model="openai/sim", user_llm_args=args)

        results = asyncio.run(
            arun_episodes(make_env, TalkOnce, [(17, i) for i in range(200)], concurrency)
        )
    assert len(results) == 200 and all(r.termination_reason == "user_stop" for r in results)
    # every slot waited on the customer at once (one at a time, the peak stays 1), never more
    assert customer.peak == concurrency, customer.peak


def test_vector_envs_run_and_autoreset():
    makers = [lambda: gym.make("AirlineScripted-v0", task=3) for _ in range(2)]
    # chat messages cannot live in shared memory, so the async vector env passes them by pipe
    for envs in (
        gym.vector.SyncVectorEnv(makers),
        gym.vector.AsyncVectorEnv(makers, shared_memory=False),
    ):
        obs, info = envs.reset(seed=[1, 2])
        assert list(info["task_id"]) == ["3", "3"]
        done = [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "d", "type": "function", "function": {"name": "done", "arguments": "{}"}}
                ],
            }
        ] * 2
        obs, reward, terminated, truncated, info = envs.step(tuple(done))
        assert list(terminated) == [True, True] and list(reward) == [0.0, 0.0]
        obs, reward, terminated, truncated, info = envs.step(tuple(done))  # autoreset step
        assert list(terminated) == [False, False] and list(info["step_count"]) == [1, 1]
        envs.close()


class BrokenAgent:
    """An agent whose model fails on its second action."""

    def __init__(self) -> None:
        self.calls = 0

    def reset(self, info):
        self.calls = 0

    def act(self, observation, info):
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("model server unreachable")
        return text_message("Let me check.")


def test_an_agent_failure_ends_the_episode_as_agent_error(tau2_tasks):
    (broken,) = run_episodes(lambda: AirlineEnv(user="scripted"), BrokenAgent, [("1", 0)], 1)
    assert broken.termination_reason == "agent_error" and broken.reward == 0.0
    assert "model server unreachable" in broken.error
    gold = run_episodes(
        lambda: AirlineEnv(user="scripted"), lambda: GoldAgent(tau2_tasks), [("1", 0)]
    )
    assert gold[0].reward == 1.0  # the same task (no writes) passes when the agent works


def test_abort_after_the_end_changes_nothing():
    env = gym.make("AirlineScripted-v0", task=1, user_kwargs={"intents": False})
    env.reset(seed=0)
    env.step(text_message("Goodbye. Anything else?"))  # the keyword customer stops
    obs, reward, terminated, truncated, info = env.unwrapped.abort("too late")
    assert info["termination_reason"] == "user_stop" and "error" not in info
