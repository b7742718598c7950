"""The episode loop: every consumer (eval, audit, async rollouts, Ray, training glue) runs this one.

:func:`run_episode` plays one episode synchronously, :func:`arun_episode` with ``env.areset`` /
``env.astep`` (awaiting an agent's ``aact`` when it has one), and :func:`arun_episodes` /
:func:`run_episodes` run many ``(task_id, seed)`` jobs concurrently, hundreds or thousands in
flight while they wait on LLMs::

    results = run_episodes(lambda: AirlineEnv(user="scripted"), GoldAgent,
                           jobs=[("17", 0), ("18", 1)], concurrency=64)

Both loops are the same code (:func:`_play`); the synchronous one drives it without an event loop.

Failure policy (one for every caller):

- the agent raises in ``reset`` or ``act`` (its model failed, a bug): the episode ends with
  termination reason ``agent_error``, reward 0, the cause in :attr:`EpisodeResult.error`
  (an :class:`~airline_gym.agents.AgentError`'s ``cause``, else ``agent raised Type: text``);
- the customer fails: the env ends the episode itself as ``user_error``;
- the env raises while applying an action (a bug in airline-gym): the episode ends as
  ``user_error`` when the customer's code raised, else ``agent_error`` (the agent's action
  could not be applied), with the exception in the cause; the run goes on;
- grading an episode that has ended fails: the env itself ends it as ``agent_error``, reward 0,
  the cause (``grading the episode (ended: <reason>) failed: ...``) recorded, never a silent
  zero (and the same here, should a wrapper's grading raise after the episode ended);
- ``env.reset`` raising (an unknown task, a customer that is not configured) is a setup error
  and propagates.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from airline_gym.domain.coroutines import run_sync
from airline_gym.domain.grading import AGENT_ERROR, USER_ERROR, grading_failed
from airline_gym.errors import ConfigError, describe_exception
from airline_gym.users.base import UserSimulator

__all__ = [
    "EpisodeResult",
    "arun_episode",
    "arun_episodes",
    "arun_pool",
    "run_episode",
    "run_episodes",
    "step_safely",
]

Job = tuple[str | int | None, int | None]
J = TypeVar("J")
_YOUNG_THRESHOLD = 20_000  # allocations between young collections while many episodes run
_FREEZE_EVERY = 50  # workers started between two freezes of what is alive
R = TypeVar("R")
Step = tuple[Any, float, bool, bool, dict[str, Any]]


@dataclass
class EpisodeResult:
    """One finished episode: what a trainer or an evaluation needs (picklable, plain data).

    ``messages`` is the system prompt and the history as the agent was shown it, in OpenAI
    format (what it reads: the row of an SFT file); ``transcript`` is the system prompt and the
    graded transcript when the two differ (the ``tool-reply`` protocol, whose agent reaches the
    customer through a tool), else None; ``meta[i]`` holds the ``timestamp`` (and, for agent and
    customer turns, ``cost``/``usage``) of ``graded[i + 1]``; ``reward_info`` is the grade as
    plain data; ``error`` is the cause of an ``agent_error`` or ``user_error`` ending.
    """

    task_id: str
    seed: int | None
    reward: float
    termination_reason: str
    steps: int
    num_errors: int
    messages: list[dict[str, Any]] = field(repr=False)
    tools: list[dict[str, Any]] = field(repr=False)
    reward_info: dict[str, Any] = field(repr=False)
    duration: float = 0.0
    error: str | None = None
    meta: list[dict[str, Any]] = field(default_factory=list, repr=False)
    agent_cost: float | None = None
    user_cost: float | None = None
    start_time: str = ""
    end_time: str = ""
    transcript: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def graded(self) -> list[dict[str, Any]]:
        """The system prompt and the transcript as graded (what a results file records)."""
        return self.messages if self.transcript is None else self.transcript


def _now() -> str:
    """Local time in tau2's format (ISO 8601 with microseconds)."""
    return datetime.now().isoformat()


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def agent_cause(exc: BaseException) -> str:
    """The recorded cause of an agent failure."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, str) and cause else f"agent raised {describe_exception(exc)}"


def _env_failure(exc: BaseException) -> tuple[str, str]:
    """(termination reason, cause) for an exception raised by ``env.step``."""
    frames = [f for f, _ in traceback.walk_tb(exc.__traceback__)]
    if any(isinstance(f.f_locals.get("self"), UserSimulator) for f in frames):
        return USER_ERROR, f"user simulator raised {describe_exception(exc)}"
    return AGENT_ERROR, f"the env could not apply the agent's action: {describe_exception(exc)}"


class _Sync:
    """Calls the env and the agent directly (the coroutine never suspends)."""

    async def reset(self, env: Any, seed: int | None, options: dict[str, Any]) -> Any:
        return env.reset(seed=seed, options=options)

    async def step(self, env: Any, action: Any) -> Step:
        return env.step(action)  # type: ignore[no-any-return]

    async def act(self, agent: Any, observation: Any, info: dict[str, Any]) -> Any:
        return agent.act(observation, info)


class _Async(_Sync):
    """Awaits ``env.areset``/``env.astep`` and an agent's ``aact`` when it has one."""

    async def reset(self, env: Any, seed: int | None, options: dict[str, Any]) -> Any:
        return await env.areset(seed=seed, options=options)

    async def step(self, env: Any, action: Any) -> Step:
        return await env.astep(action)  # type: ignore[no-any-return]

    async def act(self, agent: Any, observation: Any, info: dict[str, Any]) -> Any:
        aact = getattr(agent, "aact", None)
        if aact is not None and inspect.iscoroutinefunction(aact):
            return await aact(observation, info)
        return agent.act(observation, info)


class _Recorder:
    """Per-message timestamps and costs, appended as the graded transcript grows."""

    def __init__(self, env: Any, start: str) -> None:
        base = env.unwrapped
        self.user = getattr(base, "user", None)
        self.meta: list[dict[str, Any]] = []
        self.start = start
        self.reply_tool = bool(getattr(getattr(base, "protocol", None), "reply_tool", False))
        self.base = base

    def graded(self, info: dict[str, Any]) -> list[dict[str, Any]]:
        """The system prompt and the graded transcript (under ``tool-reply``: the episode's own,
        not the agent's view)."""
        if not self.reply_tool or getattr(self.base, "episode", None) is None:
            return info["messages"]  # type: ignore[no-any-return]
        return [info["messages"][0], *self.base.episode.transcript()]

    def user_cost(self) -> float | None:
        return _number(getattr(self.user, "cost", None))

    def record(
        self, info: dict[str, Any], agent: dict[str, Any] | None, user: float | None
    ) -> None:
        when = _now()
        for message in self.graded(info)[len(self.meta) + 1 :]:
            role = message.get("role")
            if role == "assistant":
                self.meta.append(agent or {"timestamp": self.start, "cost": 0.0})
            elif role == "user":
                self.meta.append({"timestamp": when, "cost": user})
            else:
                self.meta.append({"timestamp": when})


async def _play(
    io: _Sync, env: Any, agent: Any, task_id: str | int | None, seed: int | None
) -> EpisodeResult:
    """THE loop (see the module docstring for the failure policy)."""
    clock, start = time.perf_counter(), _now()
    base = env.unwrapped
    options = {} if task_id is None else {"task": task_id}
    observation, info = await io.reset(env, seed, options)
    recorder = _Recorder(env, start)
    recorder.record(info, None, recorder.user_cost())
    total = 0.0
    done = info.get("termination_reason") is not None  # e.g. the customer failed at once
    if not done:
        try:
            agent.reset(info)
        except Exception as exc:
            _, total, _, _, info = base.abort(agent_cause(exc))
            done = True
    while not done:
        try:
            action = await io.act(agent, observation, info)
        except Exception as exc:
            observation, reward, terminated, truncated, info = base.abort(agent_cause(exc))
        else:
            when, before = _now(), recorder.user_cost()
            agent_meta = {
                "timestamp": when,
                "cost": getattr(agent, "last_cost", None),
                "usage": getattr(agent, "last_usage", None),
            }
            try:
                observation, reward, terminated, truncated, info = await io.step(env, action)
            except Exception as exc:
                observation, reward, terminated, truncated, info = _ended_by(exc, base, info)
            after = recorder.user_cost()
            recorder.record(info, agent_meta, None if after is None else after - (before or 0.0))
        total += reward
        done = terminated or truncated
    recorder.record(info, None, None)
    return EpisodeResult(
        task_id=str(info["task_id"]),
        seed=seed,
        reward=total,
        termination_reason=str(info["termination_reason"]),
        steps=int(info["step_count"]),
        num_errors=int(info["num_errors"]),
        messages=info["messages"],
        transcript=recorder.graded(info) if recorder.reply_tool else None,
        tools=info["tools"],
        reward_info=info.get("reward_info") or {"reward": 0.0, "note": info.get("error", "")},
        duration=time.perf_counter() - clock,
        error=info.get("error"),
        meta=recorder.meta,
        agent_cost=_number(getattr(agent, "cost", None)),
        user_cost=recorder.user_cost(),
        start_time=start,
        end_time=_now(),
    )


def step_safely(env: Any, action: Any, info: dict[str, Any] | None = None) -> Step:
    """``env.step(action)`` under the runner's failure policy, for loops of one's own (``play``).

    An exception inside the env ends the episode (``agent_error``, or ``user_error`` when the
    customer's code raised) with the exception as ``info["error"]``, instead of escaping.
    ``info`` is the last info the caller has (used only if even ending the episode fails).
    """
    try:
        return env.step(action)  # type: ignore[no-any-return]
    except Exception as exc:
        return _ended_by(exc, env.unwrapped, info or {})


def _ended_by(exc: Exception, base: Any, info: dict[str, Any]) -> Step:
    episode = getattr(base, "episode", None)
    ended = getattr(episode, "termination_reason", None)
    if ended is not None:  # the action was applied and ended the episode; grading it raised
        cause = grading_failed(ended, exc).note
        return _abort(base, cause, AGENT_ERROR, info, graded=False)
    reason, cause = _env_failure(exc)
    return _abort(base, cause, reason, info)


def _abort(base: Any, cause: str, reason: str, info: dict[str, Any], graded: bool = True) -> Step:
    """End the episode after the env raised; if even that fails, a hand-made ending.

    ``graded=False``: the episode has already ended and cannot be graded; its info (messages
    included) comes from the env, its ending is ``reason`` with ``cause`` recorded, reward 0.
    """
    try:
        step: Step = base.abort(cause, reason)
    except Exception as exc:
        cause = f"{cause}; then grading failed: {describe_exception(exc)}"
    else:
        if graded:
            return step
        info = step[4]
    ending = {**info, "termination_reason": reason, "error": cause}
    ending["reward_info"] = {"reward": 0.0, "note": cause}
    truncated = reason == USER_ERROR  # as the env ends these (user_error truncates)
    return [], 0.0, not truncated, truncated, ending


def run_episode(
    env: Any, agent: Any, task_id: str | int | None = None, seed: int | None = None
) -> EpisodeResult:
    """Play one episode to its end with ``env.reset``/``env.step`` (wrappers are honoured)."""
    return run_sync(_play(_Sync(), env, agent, task_id, seed))


async def arun_episode(
    env: Any, agent: Any, task_id: str | int | None = None, seed: int | None = None
) -> EpisodeResult:
    """Play one episode to its end with ``env.areset``/``env.astep``."""
    return await _play(_Async(), env, agent, task_id, seed)


async def arun_pool(
    make_env: Callable[[], Any],
    jobs: Iterable[J],
    play: Callable[[Any, J], Awaitable[R]],
    concurrency: int = 64,
    on_result: Callable[[int, R], Awaitable[None] | None] | None = None,
    keep: bool = True,
) -> list[R]:
    """``play(env, job)`` for every job, at most ``concurrency`` at once; results in job order.

    ``concurrency`` workers each build one env with ``make_env`` (when they take their first
    job) and reuse it for their jobs, so memory grows with ``concurrency``, not with the number
    of jobs. ``on_result(index, result)`` (sync or async) is called as each job ends; with
    ``keep=False`` the results are left to it (none is held: an empty list is returned).
    """
    if concurrency < 1:
        raise ConfigError("concurrency must be at least 1")
    queue = list(enumerate(jobs))
    results: list[R | None] = [None] * len(queue) if keep else []
    queue.reverse()

    async def worker() -> None:
        env = None
        while queue:
            index, job = queue.pop()
            env = make_env() if env is None else env
            result = await play(env, job)
            if keep:
                results[index] = result
            if on_result is not None:
                pending = on_result(index, result)
                if inspect.isawaitable(pending):
                    await pending

    # What is alive while the workers start lives for the run (the envs they build, the
    # pristine DB, the tasks, the modules): frozen out of the garbage collector's scans, which
    # otherwise walk all of it on every full collection (measured at 1,000 envs: six full
    # collections during the start-up, up to 0.35 s each, every ready request waiting behind
    # them). Frozen before the first worker and again after every batch of them, so a full
    # collection never walks more than one batch's envs. Young collections are made rarer too
    # (a request's replies and history are short-lived and freed by reference counting): fewer
    # of them promote in-flight objects to the old generations. Both are restored at the end.
    count = min(concurrency, len(queue))
    frozen = count > 1 and not gc.get_freeze_count()
    thresholds = gc.get_threshold()
    if frozen:
        gc.freeze()
        gc.set_threshold(max(thresholds[0], _YOUNG_THRESHOLD), *thresholds[1:])
    # Start the workers one loop turn apart: started together, their set-up (env, first
    # request) would run in one turn while replies wait unread (a multi-second stall at 1,000).
    workers: list[asyncio.Future[None]] = []
    try:
        for started in range(1, count + 1):
            workers.append(asyncio.ensure_future(worker()))
            await asyncio.sleep(0)
            if frozen and started % _FREEZE_EVERY == 0:
                gc.freeze()
        if frozen:
            gc.freeze()
        await asyncio.gather(*workers)
    finally:
        for task in workers:  # one failed: stop the others (their episodes are abandoned)
            task.cancel()
        if frozen:
            gc.set_threshold(*thresholds)
            gc.unfreeze()  # collectable again once the caller drops them
    return [r for r in results if r is not None]


async def arun_episodes(
    make_env: Callable[[], Any],
    make_agent: Callable[[], Any],
    jobs: Iterable[Job],
    concurrency: int = 64,
    on_result: Callable[[int, EpisodeResult], Awaitable[None] | None] | None = None,
) -> list[EpisodeResult]:
    """Run ``(task_id, seed)`` jobs, at most ``concurrency`` at once; results in job order.

    ``concurrency`` workers each build one env with ``make_env`` and reuse it for their jobs
    (an agent per episode from ``make_agent``), so memory grows with ``concurrency``, not with
    the number of jobs. ``on_result(index, result)`` (sync or async) is called as each ends.
    """

    async def play(env: Any, job: Job) -> EpisodeResult:
        return await arun_episode(env, make_agent(), *job)

    return await arun_pool(make_env, jobs, play, concurrency, on_result)


def run_episodes(
    make_env: Callable[[], Any],
    make_agent: Callable[[], Any],
    jobs: Sequence[Job],
    concurrency: int = 64,
) -> list[EpisodeResult]:
    """Blocking wrapper around :func:`arun_episodes` (starts its own event loop)."""
    return asyncio.run(arun_episodes(make_env, make_agent, jobs, concurrency))
