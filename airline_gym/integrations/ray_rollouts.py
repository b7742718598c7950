"""Collect rollouts on a Ray cluster: actors that hold envs, fed ``(task_id, seed)`` jobs.

Needs the ``ray`` extra (``pip install "airline-gym[ray]"``). Each :class:`RolloutWorker` actor
builds its :class:`~airline_gym.env.AirlineEnv` instances from plain-data keyword arguments and
its agents from a picklable zero-argument factory (a class such as ``GoldAgent``, or
``functools.partial(LiteLLMAgent, "openai/my-model", api_base=...)``), and plays the jobs it
is handed concurrently with asyncio (:mod:`airline_gym.harness.runner`), reusing its envs::

    from airline_gym.agents import GoldAgent
    from airline_gym.integrations.ray_rollouts import collect

    results = collect([("17", 0), ("18", 1)], address="auto", num_workers=8,
                      env_kwargs={"user": "scripted"}, agent=GoldAgent, benchmark="tau3")

``benchmark`` (``"tau2"`` by default, or ``"tau3"``; or ``env_kwargs["benchmark"]``) picks the
task set and the customer's guidelines the envs play, as one unit; a bad one is refused before
any actor starts. The default agent, ``GoldAgent``, replays the gold of the envs' own tasks.

``collect`` starts Ray only if it is not running (``address=None`` starts a local instance,
``"auto"`` joins the cluster of this machine, ``"ray://host:10001"`` connects a client). For a
training loop, keep a :class:`RolloutPool` and call :meth:`RolloutPool.collect` every step
instead of paying the actor start-up each time. The workers must be able to import
``airline_gym`` (install it on the cluster, or pass ``runtime_env`` in ``init_kwargs``).

Balancing is dynamic (Ray's :class:`ray.util.ActorPool`): each worker holds ``concurrency``
slots, each slot plays one chunk of ``chunk_size`` jobs (default 1) and takes the next chunk as
soon as it ends, so a long LLM episode holds one slot while every other slot keeps pulling work;
no episode waits behind a static shard.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airline_gym.errors import ConfigError, MissingDependencyError

try:
    import ray
    from ray.util import ActorPool
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("airline_gym.integrations.ray_rollouts", "ray", "ray") from None

from airline_gym.agents import GoldAgent
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.harness.export import episode_record
from airline_gym.harness.runner import EpisodeResult, arun_episode
from airline_gym.integrations.task_rows import with_benchmark

__all__ = ["RolloutPool", "RolloutWorker", "collect"]

Job = tuple[str | int | None, int | None]


def _new_agent(make_agent: Callable[[], Any], env: AirlineEnv) -> Any:
    """A fresh agent for an episode of ``env``; the default, ``GoldAgent``, replays the gold of
    the env's own task set (its benchmark's, or its custom tasks), not tau2's."""
    return GoldAgent(env.task_set) if make_agent is GoldAgent else make_agent()


class RolloutWorker:
    """Plays jobs with its own envs (a plain class; :class:`RolloutPool` runs it as an actor).

    At most ``concurrency`` episodes run at once, over all calls of :meth:`run` and
    :meth:`play` together; each borrows an idle env from the worker's pool (building one when
    none is idle), so a worker holds at most ``concurrency`` envs. An episode whose agent raises
    :class:`~airline_gym.agents.AgentError` is kept with reward 0 and termination reason
    ``agent_error``; other exceptions propagate.
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
        self._gate: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self.envs_built = 0
        self.episodes = 0

    def _borrow(self) -> AirlineEnv:
        if self._idle:
            return self._idle.pop()
        self.envs_built += 1
        return AirlineEnv(**self.env_kwargs)

    def _semaphore(self) -> asyncio.Semaphore:
        """The worker's gate, on the running event loop (one per loop)."""
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate[0] is not loop:
            self._gate = (loop, asyncio.Semaphore(self.concurrency))
        return self._gate[1]

    async def run(
        self,
        jobs: Sequence[Job],
        as_records: bool = False,
        agent: Callable[[], Any] | None = None,
    ) -> list[Any]:
        """Play ``jobs``; results (or JSON-ready records) in order.

        ``agent`` replaces the worker's agent factory for these jobs (e.g. a new policy version).
        """
        gate = self._semaphore()
        make_agent = self.agent if agent is None else agent

        async def one(task_id: str | int | None, seed: int | None) -> Any:
            async with gate:
                env = self._borrow()
                try:  # the runner ends a failing agent's episode as agent_error
                    result = await arun_episode(env, _new_agent(make_agent, env), task_id, seed)
                finally:
                    self._idle.append(env)
                self.episodes += 1
                return episode_record(result) if as_records else result

        return list(await asyncio.gather(*(one(t, s) for t, s in jobs)))

    async def play(
        self,
        start: int,
        jobs: Sequence[Job],
        as_records: bool = False,
        agent: Callable[[], Any] | None = None,
    ) -> tuple[int, list[Any]]:
        """:meth:`run`, tagged with where ``jobs`` start in the caller's list."""
        return start, await self.run(jobs, as_records, agent)

    def stats(self) -> dict[str, int]:
        """Envs built, envs idle and episodes played by this worker."""
        return {"envs_built": self.envs_built, "idle": len(self._idle), "episodes": self.episodes}


class RolloutPool:
    """``num_workers`` :class:`RolloutWorker` actors on the current Ray cluster.

    Each worker gets up to ``concurrency`` chunks of ``chunk_size`` jobs at once, the next one
    as soon as one ends (see the module docstring). ``chunk_size=1`` suits LLM episodes; a few
    jobs a chunk cut Ray's per-call overhead for very short scripted ones. ``actor_options``
    go to ``ray.remote`` (``num_cpus``, ``resources``, ``runtime_env``...); Ray must already be
    initialised (:func:`collect` does it for you).
    """

    def __init__(
        self,
        num_workers: int = 2,
        env_kwargs: Mapping[str, Any] | None = None,
        agent: Callable[[], Any] = GoldAgent,
        concurrency: int = 64,
        actor_options: Mapping[str, Any] | None = None,
        chunk_size: int = 1,
        benchmark: str | None = None,
    ) -> None:
        env_kwargs = with_benchmark(env_kwargs, benchmark)  # refused here, not in every actor
        if num_workers < 1:
            raise ConfigError("num_workers must be at least 1")
        if chunk_size < 1:
            raise ConfigError("chunk_size must be at least 1")
        if concurrency < 1:
            raise ConfigError("concurrency must be at least 1")
        options = dict(actor_options or {})
        remote = ray.remote(**options)(RolloutWorker) if options else ray.remote(RolloutWorker)
        self.concurrency = concurrency
        self.chunk_size = chunk_size
        self.workers = [
            remote.remote(dict(env_kwargs or {}), agent, concurrency) for _ in range(num_workers)
        ]

    def collect(
        self,
        jobs: Sequence[Job],
        as_records: bool = False,
        agent: Callable[[], Any] | None = None,
        chunk_size: int | None = None,
    ) -> list[Any]:
        """Play ``jobs`` on whichever worker has a free slot; results in job order.

        ``agent`` and ``chunk_size`` override the pool's for this call: a training loop keeps
        the pool (actors and envs) and passes each step's policy, e.g.
        ``functools.partial(LiteLLMAgent, "openai/policy-step-12", api_base=...)``.
        """
        jobs = [(task_id, seed) for task_id, seed in jobs]
        size = self.chunk_size if chunk_size is None else chunk_size
        if size < 1:
            raise ConfigError("chunk_size must be at least 1")
        chunks = [(i, jobs[i : i + size]) for i in range(0, len(jobs), size)]
        # a worker listed `concurrency` times: that many chunks in flight on it, no more
        pool = ActorPool([w for _ in range(self.concurrency) for w in self.workers])
        results: list[Any] = [None] * len(jobs)
        done = pool.map_unordered(lambda w, c: w.play.remote(*c, as_records, agent), chunks)
        for start, part in done:
            results[start : start + len(part)] = part
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
    chunk_size: int = 1,
    benchmark: str | None = None,
) -> list[EpisodeResult] | list[dict[str, Any]]:
    """Play ``(task_id, seed)`` jobs on ``num_workers`` actors; results in job order.

    Calls ``ray.init(address=address, **init_kwargs)`` only when Ray is not initialised yet.
    ``as_records=True`` returns JSON-ready dicts (:func:`airline_gym.harness.export.episode_record`)
    instead of :class:`~airline_gym.harness.runner.EpisodeResult` objects. Jobs go to whichever
    worker has a free slot (:class:`RolloutPool`). The actors are stopped at the end; use
    :class:`RolloutPool` to keep them between calls.
    """
    env_kwargs = with_benchmark(env_kwargs, benchmark)  # before Ray starts: a bad one is refused
    if not ray.is_initialized():
        ray.init(address=address, **dict(init_kwargs or {}))
    pool = RolloutPool(num_workers, env_kwargs, agent, concurrency, actor_options, chunk_size)
    with pool:
        return pool.collect(jobs, as_records)
