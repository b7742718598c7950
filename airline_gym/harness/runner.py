"""Run many episodes concurrently in one process with asyncio.

Hundreds of episodes can be in flight while they wait on LLMs (agent or customer); a semaphore
bounds how many run at once. Agents may define ``async aact(observation, info)``; plain
``act`` is called directly (it should be quick, e.g. a scripted policy).

    results = run_episodes(lambda: AirlineEnv(user="scripted"), GoldAgent,
                           jobs=[("17", 0), ("18", 1)], concurrency=64)
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import ConfigError


@dataclass
class EpisodeResult:
    """One finished episode: what a trainer or an evaluation needs."""

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


async def _act(agent: Any, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
    act = getattr(agent, "aact", None)
    if act is not None and inspect.iscoroutinefunction(act):
        return await act(observation, info)
    return agent.act(observation, info)


async def arun_episode(
    env: AirlineEnv, agent: Any, task_id: str | int | None = None, seed: int | None = None
) -> EpisodeResult:
    """Play one episode to its end with ``env.areset``/``env.astep``."""
    start = time.perf_counter()
    options = None if task_id is None else {"task": task_id}
    observation, info = await env.areset(seed=seed, options=options)
    agent.reset(info)
    reward, total = 0.0, 0.0
    terminated = truncated = env.episode is not None and env.episode.done
    while not (terminated or truncated):
        try:
            action = await _act(agent, observation, info)
        except Exception as exc:  # the agent (e.g. its LLM) failed: end as agent_error
            cause = getattr(exc, "cause", None) or f"agent raised {type(exc).__name__}: {exc}"
            observation, reward, terminated, truncated, info = env.abort(cause)
        else:
            observation, reward, terminated, truncated, info = await env.astep(action)
        total += reward
    if "reward_info" not in info and env.episode is not None:  # ended during reset
        info["reward_info"] = env.episode.grade().to_dict()
    return EpisodeResult(
        task_id=info["task_id"],
        seed=seed,
        reward=total,
        termination_reason=info["termination_reason"],
        steps=info["step_count"],
        num_errors=info["num_errors"],
        messages=info["messages"],
        tools=info["tools"],
        reward_info=info["reward_info"],
        duration=time.perf_counter() - start,
        error=info.get("error"),
    )


async def arun_episodes(
    make_env: Callable[[], AirlineEnv],
    make_agent: Callable[[], Any],
    jobs: Iterable[tuple[str | int | None, int | None]],
    concurrency: int = 64,
) -> list[EpisodeResult]:
    """Run ``(task_id, seed)`` jobs, at most ``concurrency`` at once; results in job order."""
    if concurrency < 1:
        raise ConfigError("concurrency must be at least 1")
    gate = asyncio.Semaphore(concurrency)

    async def one(task_id: str | int | None, seed: int | None) -> EpisodeResult:
        async with gate:
            return await arun_episode(make_env(), make_agent(), task_id, seed)

    return list(await asyncio.gather(*(one(t, s) for t, s in jobs)))


def run_episodes(
    make_env: Callable[[], AirlineEnv],
    make_agent: Callable[[], Any],
    jobs: Sequence[tuple[str | int | None, int | None]],
    concurrency: int = 64,
) -> list[EpisodeResult]:
    """Blocking wrapper around :func:`arun_episodes` (starts its own event loop)."""
    return asyncio.run(arun_episodes(make_env, make_agent, jobs, concurrency))
