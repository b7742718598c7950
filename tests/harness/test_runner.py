"""The one episode loop: the same outcome sync and async, and one failure policy for all."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import gymnasium as gym
import pytest

from airline_gym.agents import AgentError, GoldAgent, text_message, tool_call_message
from airline_gym.env import AirlineEnv
from airline_gym.harness.runner import arun_episode, arun_episodes, run_episode, step_safely
from airline_gym.users import UserSimulator

RESULT_FIELDS = ("task_id", "seed", "reward", "termination_reason", "steps", "num_errors")


def outcome(result: Any) -> tuple[Any, ...]:
    return (*tuple(getattr(result, f) for f in RESULT_FIELDS), result.messages, result.error)


class FailsIn:
    """An agent that raises in ``reset`` or on its n-th ``act``."""

    def __init__(self, where: str, exc: Exception, after: int = 0) -> None:
        self.where, self.exc, self.after, self.calls = where, exc, after, 0

    def reset(self, info: dict[str, Any]) -> None:
        if self.where == "reset":
            raise self.exc

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        self.calls += 1
        if self.calls > self.after:
            raise self.exc
        return text_message("One moment, please.")


@pytest.mark.parametrize("where", ["reset", "act"])
@pytest.mark.parametrize("exc", [RuntimeError("socket closed"), AgentError("model gave up")])
def test_a_failing_agent_ends_the_episode_as_agent_error_sync_and_async(where, exc):
    sync = run_episode(AirlineEnv(user="scripted"), FailsIn(where, exc, 1), "1", 4)
    asyn = asyncio.run(arun_episode(AirlineEnv(user="scripted"), FailsIn(where, exc, 1), "1", 4))
    for result in (sync, asyn):
        assert result.termination_reason == "agent_error" and result.reward == 0.0
        assert result.reward_info["reward"] == 0.0
        cause = exc.cause if isinstance(exc, AgentError) else "agent raised RuntimeError"
        assert cause in result.error
    assert outcome(sync) == outcome(asyn)
    # the agent that acted once left its message in the record; the one that failed at reset did not
    said = [m for m in sync.messages if m.get("content") == "One moment, please."]
    assert len(said) == (1 if where == "act" else 0)


class Crashes(UserSimulator):
    """A customer whose code has a bug on its second turn (not a UserSimulatorError)."""

    offline = True

    def reset(self, task: Any, seed: int | None = None) -> None:
        self.turns = 0

    def reply(self, dialogue: Any) -> str:
        self.turns += 1
        if self.turns > 1:
            raise ZeroDivisionError("customer bug")
        return "Hi, I need help with my booking."


def test_a_customer_that_raises_is_a_user_error_and_the_other_episodes_go_on(tau2_tasks):
    def make_env() -> AirlineEnv:
        return AirlineEnv(user=Crashes())

    class TalkThenGold:
        def __init__(self) -> None:
            self.gold = GoldAgent(tau2_tasks)

        def reset(self, info: dict[str, Any]) -> None:
            self.gold.reset(info)

        def act(self, observation: Any, info: dict[str, Any]) -> Any:
            return (
                text_message("How can I help?")
                if info["task_id"] == "3"
                else self.gold.act(observation, info)
            )

    results = asyncio.run(arun_episodes(make_env, TalkThenGold, [("3", 0), ("1", 0)], 2))
    crashed, fine = results
    assert crashed.termination_reason == "user_error" and crashed.reward == 0.0
    assert "ZeroDivisionError: customer bug" in crashed.error
    assert fine.task_id == "1" and fine.termination_reason == "agent_stop"


class Exploding(gym.Wrapper):
    """An env layer that raises on the agent's second action (an env bug, as a stand-in)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.steps = 0

    def reset(self, **kwargs: Any) -> Any:
        self.steps = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> Any:
        self.steps += 1
        if self.steps == 2:
            raise OverflowError("int too large to convert to float")
        return self.env.step(action)


def test_an_env_that_raises_on_an_action_ends_as_agent_error_with_the_cause():
    agent = FailsIn("never", RuntimeError(), after=10)
    result = run_episode(Exploding(AirlineEnv(user="scripted")), agent, "1", 0)
    assert result.termination_reason == "agent_error" and result.reward == 0.0
    assert "could not apply the agent's action: OverflowError" in result.error
    assert result.steps >= 2 and result.messages[0]["role"] == "system"


def test_a_huge_integer_argument_never_escapes_the_loop():
    huge = {"user_id": "mia_li_3668", "amount": int("9" * 401)}
    call = tool_call_message("send_certificate", huge, "c1")
    agent = FailsIn("never", RuntimeError(), after=10)
    agent.act = lambda observation, info: call  # type: ignore[method-assign]
    result = run_episode(AirlineEnv(user="scripted", max_errors=2), agent, "5", 0)
    # either the env reports an error result (fixed in the domain) or the runner ends the episode
    assert result.termination_reason in ("too_many_errors", "agent_error")
    if result.termination_reason == "agent_error":
        assert "OverflowError" in result.error


def test_many_jobs_reuse_one_env_per_worker_and_keep_job_order(tau2_tasks):
    built = []

    def make_env() -> AirlineEnv:
        built.append(1)
        return AirlineEnv(user="scripted")

    jobs = [(t.id, i) for i, t in enumerate(list(tau2_tasks)[:12])]
    results = asyncio.run(arun_episodes(make_env, lambda: GoldAgent(tau2_tasks), jobs, 4))
    assert [r.task_id for r in results] == [t for t, _ in jobs]
    assert all(r.reward == 1.0 for r in results)
    assert 1 <= len(built) <= 4  # envs grow with the concurrency, not with the jobs


def test_meta_has_one_entry_per_transcript_message(tau2_tasks):
    result = run_episode(AirlineEnv(user="scripted"), GoldAgent(tau2_tasks), "14", 1)
    assert len(result.meta) == len(result.messages) - 1
    roles = [m["role"] for m in result.messages[1:]]
    for role, meta in zip(roles, result.meta, strict=True):
        assert "timestamp" in meta and (("cost" in meta) == (role != "tool"))
    assert result.start_time <= result.end_time


def test_step_safely_ends_the_episode_instead_of_raising():
    env = Exploding(AirlineEnv(user="scripted"))
    obs, info = env.reset(seed=0, options={"task": "1"})
    lookup = tool_call_message("get_user_details", {"user_id": "mia_li_3668"}, "c1")
    obs, _, terminated, truncated, info = step_safely(env, lookup, info)
    assert not (terminated or truncated)
    obs, reward, terminated, truncated, info = step_safely(env, lookup, info)
    assert reward == 0.0 and terminated and not truncated  # as env.abort ends an agent_error
    assert info["termination_reason"] == "agent_error" and "OverflowError" in info["error"]
    assert info["reward_info"]["reward"] == 0.0


def test_pool_freezes_each_batch_of_started_workers_and_restores_the_collector() -> None:
    # what the workers build while they start is frozen batch by batch (a full collection at
    # 1,000 envs otherwise stalls every episode), and the collector is as it was afterwards
    from airline_gym.harness import runner

    assert gc.get_freeze_count() == 0
    thresholds, every = gc.get_threshold(), runner._FREEZE_EVERY
    envs: list[list[int]] = []
    scanned: list[bool] = []
    jobs = every + 5
    all_started = asyncio.Event()

    async def play(env: list[int], job: int) -> int:
        envs.append(env)
        if job == every:  # the first worker of the second batch
            ids = {id(o) for g in (0, 1, 2) for o in gc.get_objects(g)}
            scanned.extend([id(envs[0]) in ids, id(envs[every - 1]) in ids, id(env) in ids])
        if len(envs) == jobs:
            all_started.set()
        # each worker keeps its one job until all have started, however slow the machine: a
        # worker done early would take job ``every`` with an env of the first batch
        await all_started.wait()
        return job

    out = asyncio.run(runner.arun_pool(lambda: [], range(jobs), play, concurrency=jobs))
    assert out == list(range(jobs))
    assert scanned == [False, False, True]  # the first batch frozen, the new env not yet
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds
