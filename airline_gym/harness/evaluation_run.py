"""One evaluation's episodes: played concurrently, journalled as they end, stopped on request.

:func:`airline_gym.harness.evaluate.evaluate` checks the settings and opens the results file;
:class:`EvaluationRun` plays the (task, trial) pairs still missing (on one event loop or in
threads, see :func:`~airline_gym.harness.play_jobs.play_jobs`), records each simulation, and
stops early on Ctrl-C or once ``max_failures`` simulations failed.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from airline_gym.domain.tasks import TaskSet
from airline_gym.domain.user_audit import audit_conversation
from airline_gym.harness.failures import FailureLimitReached, failure_cause
from airline_gym.harness.interrupt import Interrupted, StopOnInterrupt
from airline_gym.harness.journal import RunFile
from airline_gym.harness.play_jobs import play_jobs
from airline_gym.harness.results import (
    JSONObject,
    Results,
    simulation_record,
    task_sort_key,
)
from airline_gym.harness.retry import failure_policy
from airline_gym.harness.runner import EpisodeResult, arun_episode, run_episode
from airline_gym.harness.seeds import episode_seed
from airline_gym.harness.user_audit import USER_AUDIT_KEY
from airline_gym.llm.reply_cache import ReplyCache

if TYPE_CHECKING:
    from airline_gym.harness.evaluate import EvalConfig

__all__ = ["AgentFactory", "EvaluationRun", "Progress"]

_ID_NAMESPACE = uuid.UUID("6f1d8f9e-4b1a-4c55-9a57-2a3e0c6b7d10")

AgentFactory = Callable[[int], Any]
Progress = Callable[[JSONObject | None, int, int, Results], None]


def _llm_customer(user: Any) -> bool:
    """Whether the customer is the LLM one (its turns then get the customer audit)."""
    from airline_gym.users import LLMUser

    return user == "llm" if isinstance(user, str) else isinstance(user, LLMUser)


def _never_blocks(agent: Any) -> bool:
    """Whether ``agent`` (a built-in name or a sample agent) can share one event loop."""
    return isinstance(agent, str) or inspect.iscoroutinefunction(getattr(agent, "aact", None))


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class EvaluationRun:
    """One evaluation: the episodes still to play, played concurrently, journalled as they end."""

    def __init__(
        self,
        config: EvalConfig,
        task_set: TaskSet,
        results: Results,
        make_agent: AgentFactory,
        ids: list[str],
        store: RunFile | None,
        progress: Progress | None,
        max_failures: int | None = None,
    ) -> None:
        self.config, self.task_set, self.results = config, task_set, results
        self.make_agent, self.ids, self.store, self.progress = make_agent, ids, store, progress
        # without a results file the simulations are kept here; with one, only where they are
        self.kept: list[JSONObject] = [] if store is not None else list(results.simulations)
        if store is None:
            results.simulations = self.kept
        agent = results.info.get("agent_info") or {}
        self.name = f"{results.info['task_set']}|{agent.get('implementation')}|{agent.get('llm')}"
        self.policy = failure_policy(config)
        self.audit_customer = _llm_customer(config.user)
        cache = config.user_cache
        self.cache = cache if isinstance(cache, ReplyCache) else None
        self.cache_start = self.cache.counts() if self.cache is not None else {}
        self.max_failures, self.failures = max_failures, Counter[str]()
        self.stop = StopOnInterrupt()

    def _seed(self, task_id: str, trial: int) -> int:
        return episode_seed(self.config.seed, task_id, trial, self.config.protocol)

    def _record(self, result: EpisodeResult, task_id: str, trial: int) -> JSONObject:
        key = f"{self.name}|{task_id}|{trial}|{result.seed}"
        sim_id = str(uuid.uuid5(_ID_NAMESPACE, key))
        task = self.task_set[task_id]
        record = simulation_record(result, task, trial, sim_id, self.config.benchmark)
        if self.audit_customer:
            scenario = task.raw.get("user_scenario") or {}
            record[USER_AUDIT_KEY] = audit_conversation(scenario, record["messages"])
        return record

    def one(self, task_id: str, trial: int) -> JSONObject:
        """Play one (task, trial) with its own env and return its simulation record."""
        seed = self._seed(task_id, trial)

        def attempt() -> EpisodeResult:
            return run_episode(self.config.make_env(), self.make_agent(seed), task_id, seed)

        return self._record(self.policy.play(attempt, task_id, seed), task_id, trial)

    async def aone(self, env: Any, job: tuple[str, int]) -> JSONObject:
        """Play one (task, trial) on ``env`` (reused: every episode is seeded at reset)."""
        task_id, trial = job
        seed = self._seed(task_id, trial)

        async def attempt() -> EpisodeResult:
            return await arun_episode(env, self.make_agent(seed), task_id, seed)

        return self._record(await self.policy.aplay(attempt, task_id, seed), task_id, trial)

    def finished(self, sim: JSONObject, total: int) -> None:
        """Journal a finished simulation (none is kept in memory) and report it."""
        if self.store is not None:
            self.store.append(sim)
        else:
            self.kept.append(sim)
        if self.progress is not None:
            self.progress(sim, len(self.results.simulations), total, self.results)
        cause = failure_cause(sim)
        if cause is not None:
            self.failures[cause] += 1
            if self._failure_limit_reached():
                self.stop.request()  # start no more; those in flight end as after Ctrl-C

    def _failure_limit_reached(self) -> bool:
        return self.max_failures is not None and self.failures.total() >= self.max_failures

    def play(self, agent: Any) -> Results:
        """Play every missing (task, trial), then write the results file once.

        ``agent`` (a name or a sample agent) decides how: one event loop or threads.
        """
        done = self.results.finished() if self.store is None else self.store.finished()
        todo = [(t, n) for n in range(self.config.trials) for t in self.ids if (t, n) not in done]
        total = len(self.results.simulations) + len(todo)
        if self.progress is not None:
            self.progress(None, len(self.results.simulations), total, self.results)

        def ended(sim: JSONObject) -> None:
            self.finished(sim, total)

        concurrency = self.config.concurrency
        if _never_blocks(agent) and not _in_event_loop():
            make_env = self.config.make_env
            stopped = play_jobs(
                todo, concurrency, ended, aplay=self.aone, make_env=make_env, stop=self.stop
            )
        else:
            stopped = play_jobs(todo, concurrency, ended, play=self.one, stop=self.stop)
        journal = None if self.store is None else self.store.journal
        saved = len(self.results.simulations)
        if stopped and self._failure_limit_reached():
            if saved < total:
                assert self.max_failures is not None
                raise FailureLimitReached(self.failures, self.max_failures, saved, total, journal)
        elif stopped:
            raise Interrupted(saved, total, journal)
        order = {t: i for i, t in enumerate(self.ids)}

        def key(pair: tuple[str, int]) -> tuple[Any, ...]:
            return (order.get(pair[0], len(order)), task_sort_key(pair[0]), pair[1])

        if self.cache is not None:
            self._count_cache()
        if self.store is not None:
            self.results = self.store.finish(self.results, key)
        else:
            self.kept.sort(key=lambda s: key((str(s["task_id"]), int(s.get("trial") or 0))))
        return self.results

    def _count_cache(self) -> None:
        """Record this run's reply-cache hits and misses (added to a resumed run's)."""
        assert self.cache is not None
        before = self.results.info.get("user_cache") or {}
        now = self.cache.counts()
        self.results.info["user_cache"] = {
            name: int(before.get(name, 0)) + now[name] - self.cache_start[name]
            for name in ("hits", "misses")
        }
