"""Evaluate an agent on the airline tasks and write a tau2-bench results file.

:func:`evaluate` runs every (task, trial) pair through the one episode loop
(:mod:`airline_gym.harness.runner`), ``config.concurrency`` at a time. An agent that never
blocks (a built-in one, or one with an async ``aact`` such as ``LiteLLMAgent``) is played on
one event loop (:func:`~airline_gym.harness.runner.arun_pool`: one env per concurrent slot,
reused); any other agent's ``act`` may block, so its episodes run in threads, each with its own
env. Both give the same simulations (every episode is seeded at reset). Per-episode seeds are
derived from ``config.seed``: under the ``leaderboard`` protocol one seed per trial as
``tau2 run`` derives it (the same for every task, shared by agent and customer), under ``gym``
one per (task, trial). Failures follow the benchmark's policy (:mod:`airline_gym.harness.retry`).
With ``out``, finished simulations are journalled as they end and the results file is written
once at the end (:mod:`airline_gym.harness.journal`); ``resume=True`` continues a killed or
shorter run. No simulation is kept in memory then: the results returned read each one from the
file when it is used, so memory is flat in the number of episodes. The command line is
``airline-gym eval`` (:mod:`airline_gym.cli.eval`).
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.agents.registry import BUILTIN_AGENTS, builtin_agent, describe_builtin
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, benchmark_tasks
from airline_gym.domain.tasks import TaskSet, load_task_set, task_key
from airline_gym.errors import ConfigError, UnknownIdError
from airline_gym.harness.evaluation_run import AgentFactory, EvaluationRun, Progress
from airline_gym.harness.failures import RUN_FAILURE_ENDINGS
from airline_gym.harness.journal import RunFile
from airline_gym.harness.results import (
    JSONObject,
    Results,
)
from airline_gym.harness.retry import failure_policy
from airline_gym.harness.run_info import (
    check_resumable,
    check_same_tasks,
    describe_agent,
    run_info,
    tasks_sha256,
)
from airline_gym.harness.seeds import episode_seed
from airline_gym.llm.reply_cache import ReplyCache, open_reply_cache

__all__ = [
    "BUILTIN_AGENTS",
    "DEFAULT_SEED",
    "EvalConfig",
    "builtin_agent",
    "describe_agent",
    "episode_seed",
    "evaluate",
    "select_task_ids",
]

#: tau2-bench's default base seed.
DEFAULT_SEED = 300


@dataclass
class EvalConfig:
    """What to run: the tasks, trials, customer and limits (see ``airline-gym eval --help``)."""

    tasks: str | os.PathLike[str] | None = None  # a tasks.json; None: the benchmark's
    split: str = "base"
    task_ids: Sequence[str | int] | None = None
    trials: int = 1
    seed: int = DEFAULT_SEED
    max_steps: int = 200
    max_errors: int = 10
    user: Any = "scripted"
    user_model: str | None = None
    user_llm_args: dict[str, Any] | None = None
    concurrency: int = 1
    data_dir: str | os.PathLike[str] | None = None
    extra_info: dict[str, Any] = field(default_factory=dict)
    #: "gym" or "leaderboard" (``tau2 run``'s; see :mod:`airline_gym.env.protocols`).
    protocol: str = "gym"
    #: A reply cache for the LLM customer: the path of its SQLite file, or a ``ReplyCache``
    #: (its hits and misses go into the results' ``info["user_cache"]``).
    user_cache: ReplyCache | str | os.PathLike[str] | None = None
    #: "tau2" or "tau3": task set, customer guidelines and failure policy as one unit; tau3's
    #: re-runs a failed simulation ``simulation_retries`` times, ``retry_delay`` s apart.
    benchmark: str = DEFAULT_BENCHMARK
    simulation_retries: int = 3
    retry_delay: float = 1.0

    @property
    def task_set_name(self) -> str:
        """The task set run: a path as given, else the benchmark's name."""
        return str(benchmark_tasks(self.tasks, self.benchmark))

    #: Opt-in grading components (None: each task's own basis, the leaderboard's).
    reward_basis: tuple[str, ...] | None = None
    #: The NL-assertion judge (a ChatModel) when ``reward_basis`` has NL_ASSERTION.
    judge: Any = None

    def validate(self) -> None:
        """Raise a one-line ``ValueError`` for an impossible setting."""
        from airline_gym.env.protocols import get_protocol

        for name in ("trials", "concurrency", "max_steps", "max_errors"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"{name.replace('_', '-')} must be a whole number >= 1: {value!r}"
                )
        get_protocol(self.protocol)
        failure_policy(self)
        benchmark_tasks(self.tasks, self.benchmark)

    def make_env(self) -> Any:
        """A fresh env for one episode of this run."""
        from airline_gym.env.airline_env import AirlineEnv

        user = self.user if isinstance(self.user, str) else copy.deepcopy(self.user)
        return AirlineEnv(
            tasks=self.tasks,
            user=user,
            user_model=self.user_model if isinstance(user, str) else None,
            user_llm_args=self.user_llm_args if isinstance(user, str) else None,
            max_steps=self.max_steps,
            max_errors=self.max_errors,
            data_dir=self.data_dir,
            protocol=self.protocol,
            user_cache=self.user_cache,
            benchmark=self.benchmark,
            reward_basis=self.reward_basis,
            judge=self.judge,
        )


def _factory(agent: Any, task_set: TaskSet) -> AgentFactory:
    """A name, a factory ``seed -> agent``, or an agent instance (deep-copied per episode)."""
    if isinstance(agent, str):
        describe_builtin(agent)  # an unknown name fails here, before anything runs
        return lambda seed: builtin_agent(agent, task_set, seed)
    if callable(getattr(agent, "act", None)) and not isinstance(agent, type):
        return lambda seed: copy.deepcopy(agent)
    if callable(agent):
        return agent  # type: ignore[no-any-return]
    raise TypeError(f"agent must be a name, an agent or a factory, not {type(agent).__name__}")


def select_task_ids(task_set: TaskSet, config: EvalConfig) -> list[str]:
    """The ids ``config`` selects (its ``task_ids``, else its split); unknown ids: ``KeyError``."""
    if config.task_ids:
        ids = [task_key(t).strip() for t in config.task_ids]
        missing = [t for t in ids if t not in task_set]
        if missing:
            raise UnknownIdError(
                f"no task {', '.join(map(repr, missing))} in task set {task_set.name!r} "
                f"(ids: {task_set.id_range()})"
            )
        return list(dict.fromkeys(ids))
    return [t.id for t in task_set.split(config.split)]


def _trials(info: Mapping[str, Any]) -> int:
    value = info.get("num_trials")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _continue(old: Results, fresh: Results, path: Path, task_set: TaskSet) -> Results:
    """The run in ``path`` (``old``) extended by this one's tasks and trials."""
    check_resumable(path, old.info, fresh.info)
    now = {t.id: t.raw for t in task_set}
    check_same_tasks(path, old.info, old.tasks, now, task_set.name)
    info = dict(fresh.info)
    info["num_trials"] = max(_trials(fresh.info), _trials(old.info))
    old_ids = old.info.get("task_ids")
    old_ids = [str(t) for t in old_ids] if isinstance(old_ids, list) else []
    info["task_ids"] = list(dict.fromkeys([*old_ids, *fresh.info["task_ids"]]))
    if isinstance(old.info.get("user_cache"), dict):  # this run's hits and misses add to them
        info["user_cache"] = old.info["user_cache"]
    known = {str(t.get("id")) for t in old.tasks}
    tasks = old.tasks + [t for t in fresh.tasks if str(t.get("id")) not in known]
    info["tasks_sha256"] = tasks_sha256(tasks)
    return Results(info=info, tasks=tasks, simulations=old.simulations, timestamp=old.timestamp)


def _open_run(
    store: RunFile, fresh: Results, resume: bool, retry_errors: bool, task_set: TaskSet
) -> tuple[Results, bool]:
    """(the results to extend, whether the journal is appended to); refuses to overwrite."""
    if not resume:
        if store.path.exists():
            raise ConfigError(
                f"{store.path} exists: pass resume=True to continue it, or choose another out"
            )
        if store.journal.exists():
            raise ConfigError(
                f"{store.path} has an unfinished run ({store.journal.name}): pass resume=True "
                "to continue it, or choose another out"
            )
        return fresh, False
    old = store.load(drop=RUN_FAILURE_ENDINGS if retry_errors else ())
    if old is None:
        return fresh, False
    return _continue(old, fresh, store.path, task_set), store.journal.exists()


def evaluate(
    agent: Any,
    config: EvalConfig | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    resume: bool = False,
    retry_errors: bool = False,
    progress: Progress | None = None,
    agent_info: JSONObject | None = None,
    max_failures: int | None = None,
) -> Results:
    """Run ``agent`` on every (task, trial) of ``config`` and return the results.

    ``agent``: a built-in name (:data:`BUILTIN_AGENTS`), a factory ``seed -> agent`` (called
    once per episode with the episode's seed), or an agent instance (deep-copied per episode).
    ``out``: the results file (it must not exist unless ``resume``); only one run at a time
    may write it. ``resume``: run only the (task, trial) pairs ``out`` (and the journal of a
    killed run) lacks; ``retry_errors`` also reruns its ``agent_error``/``user_error``
    simulations. ``progress(sim, done, total, results)`` is called once with ``sim=None``
    before the first episode, then after each simulation. ``max_failures``: once this many of
    the run's simulations failed on its machinery (agent_error, user_error,
    infrastructure_error, a failed NL judge), no more are started and
    :class:`~airline_gym.harness.failures.FailureLimitReached` is raised (the finished ones are
    saved, as after Ctrl-C: ``resume=True, retry_errors=True`` continues).
    """
    config = config or EvalConfig()
    config.validate()
    if max_failures is not None and (
        isinstance(max_failures, bool) or not isinstance(max_failures, int) or max_failures < 1
    ):
        raise ConfigError(f"max_failures must be a whole number >= 1, got {max_failures!r}")
    if config.user_cache is not None:  # opened (and checked) once; every episode shares it
        config = dataclasses.replace(config, user_cache=open_reply_cache(config.user_cache))
    if resume and out is None:
        raise ConfigError("resume needs the results file (out=...)")
    task_set = load_task_set(config.task_set_name, config.data_dir)
    ids = select_task_ids(task_set, config)
    make_agent = _factory(agent, task_set)
    sample = agent if isinstance(agent, str) else make_agent(config.seed)
    agent_info = agent_info or describe_agent(sample)
    tasks = [task_set[t].raw for t in ids]
    info = run_info(config, agent_info, ids, tasks)
    config.make_env()  # in this thread first: bad settings fail here, and shared data loads once
    fresh = Results(info=info, tasks=tasks)
    if out is None:
        run = EvaluationRun(config, task_set, fresh, make_agent, ids, None, progress, max_failures)
        return run.play(sample)
    with RunFile(out) as store:
        results, appending = _open_run(store, fresh, resume, retry_errors, task_set)
        store.start(results, appending)
        results.simulations = store.simulations  # on disk: read when used, never all held
        run = EvaluationRun(
            config, task_set, results, make_agent, ids, store, progress, max_failures
        )
        return run.play(sample)
