"""Collect rollouts on a Ray cluster: actors that hold envs, fed ``(task_id, seed)`` jobs.

Needs the ``ray`` extra (``pip install "airline-gym[ray]"``). Each :class:`RolloutWorker` actor
builds its :class:`~airline_gym.env.AirlineEnv` instances from plain-data keyword arguments and
its agents from a picklable zero-argument factory (a class such as ``GoldAgent``, or
``functools.partial(LiteLLMAgent, "openai/my-model", api_base=...)``), and runs its share of
the jobs concurrently with asyncio (:mod:`airline_gym.harness.runner`), reusing its envs::

    from airline_gym.agents import GoldAgent
    from airline_gym.integrations.ray_rollouts import collect

    results = collect([("17", 0), ("18", 1)], address="auto", num_workers=8,
                      env_kwargs={"user": "scripted"}, agent=GoldAgent)

``collect`` starts Ray only if it is not running (``address=None`` starts a local instance,
``"auto"`` joins the cluster of this machine, ``"ray://host:10001"`` connects a client). For a
training loop, keep a :class:`RolloutPool` and call :meth:`RolloutPool.collect` every step
instead of paying the actor start-up each time. The workers must be able to import
``airline_gym`` (install it on the cluster, or pass ``runtime_env`` in ``init_kwargs``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airline_gym.errors import ConfigError, MissingDependencyError

try:
    import ray
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("airline_gym.integrations.ray_rollouts", "ray", "ray") from None

from airline_gym.agents import GoldAgent
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.harness.export import episode_record
from airline_gym.harness.runner import EpisodeResult, arun_episode

__all__ = ["RolloutPool", "RolloutWorker", "collect"]

Job = tuple[str | int | None, int | None]


class RolloutWorker:
    """Plays jobs with its own envs (a plain class; :class:`RolloutPool` runs it as an actor).

    At most ``concurrency`` episodes run at once; each borrows an idle env from the worker's
    pool (building one when none is idle), so a worker holds at most ``concurrency`` envs. An
    episode whose agent raises :class:`~airline_gym.agents.AgentError` is kept with reward 0
    and termination reason ``agent_error``; other exceptions propagate.
    """

    def __init__(
        self,
        env_kwargs: Mapping[str, Any] | None = None,
        agent: Callable[[], Any] = GoldAgent,
        concurrency: int = 64,
    ) -> None:
        if concurrency < 1:
            raise ConfigError("concurrency must be at least 1")
        self.env_kwargs = dict(env_kwargs or {})
        self.agent = agent
        self.concurrency = concurrency
        self._idle: list[AirlineEnv] = []
        self.envs_built = 0

    def _borrow(self) -> AirlineEnv:
        if self._idle:
            return self._idle.pop()
        self.envs_built += 1
        return AirlineEnv(**self.env_kwargs)

    async def run(self, jobs: Sequence[Job], as_records: bool = False) -> list[Any]:
        """Play ``jobs``; results (or JSON-ready records) in order."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(task_id: str | int | None, seed: int | None) -> Any:
            async with gate:
                env = self._borrow()
                try:  # the runner ends a failing agent's episode as agent_error
                    result = await arun_episode(env, self.agent(), task_id, seed)
                finally:
                    self._idle.append(env)
                return episode_record(result) if as_records else result

        return list(await asyncio.gather(*(one(t, s) for t, s in jobs)))

    def stats(self) -> dict[str, int]:
        """How many envs this worker has built and how many are idle."""
        return {"envs_built": self.envs_built, "idle": len(self._idle)}


class RolloutPool:
    """``num_workers`` :class:`RolloutWorker` actors on the current Ray cluster.

    ``actor_options`` go to ``ray.remote`` (``num_cpus``, ``resources``, ``runtime_env``...);
    Ray must already be initialised (:func:`collect` does it for you).
    """

    def __init__(
        self,
        num_workers: int = 2,
        env_kwargs: Mapping[str, Any] | None = None,
        agent: Callable[[], Any] = GoldAgent,
        concurrency: int = 64,
        actor_options: Mapping[str, Any] | None = None,
    ) -> None:
        if num_workers < 1:
            raise ConfigError("num_workers must be at least 1")
        options = dict(actor_options or {})
        remote = ray.remote(**options)(RolloutWorker) if options else ray.remote(RolloutWorker)
        self.workers = [
            remote.remote(dict(env_kwargs or {}), agent, concurrency) for _ in range(num_workers)
        ]

    def collect(self, jobs: Sequence[Job], as_records: bool = False) -> list[Any]:
        """Play ``jobs`` spread round-robin over the workers; results in job order."""
        jobs = [(task_id, seed) for task_id, seed in jobs]
        n = len(self.workers)
        shares = [jobs[i::n] for i in range(n)]
        pairs = zip(self.workers, shares, strict=True)
        refs = [worker.run.remote(share, as_records) for worker, share in pairs if share]
        parts = ray.get(refs)
        results: list[Any] = [None] * len(jobs)
        for i, part in enumerate(parts):
            results[i::n] = part
        return results

    def stats(self) -> list[dict[str, int]]:
        """Each worker's :meth:`RolloutWorker.stats`."""
        return list(ray.get([w.stats.remote() for w in self.workers]))

    def shutdown(self) -> None:
        """Stop the actors (Ray itself keeps running)."""
        for worker in self.workers:
            ray.kill(worker)
        self.workers = []

    def __enter__(self) -> RolloutPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()


def collect(
    jobs: Sequence[Job],
    address: str | None = None,
    num_workers: int = 2,
    env_kwargs: Mapping[str, Any] | None = None,
    agent: Callable[[], Any] = GoldAgent,
    concurrency: int = 64,
    as_records: bool = False,
    actor_options: Mapping[str, Any] | None = None,
    init_kwargs: Mapping[str, Any] | None = None,
) -> list[EpisodeResult] | list[dict[str, Any]]:
    """Play ``(task_id, seed)`` jobs on ``num_workers`` actors; results in job order.

    Calls ``ray.init(address=address, **init_kwargs)`` only when Ray is not initialised yet.
    ``as_records=True`` returns JSON-ready dicts (:func:`airline_gym.harness.export.episode_record`)
    instead of :class:`~airline_gym.harness.runner.EpisodeResult` objects. The actors are stopped
    at the end; use :class:`RolloutPool` to keep them between calls.
    """
    if not ray.is_initialized():
        ray.init(address=address, **dict(init_kwargs or {}))
    with RolloutPool(num_workers, env_kwargs, agent, concurrency, actor_options) as pool:
        return pool.collect(jobs, as_records)
