"""ART's tau-bench HTTP protocol on ``airline-gym serve``'s app, so ART trains on this env as is.

OpenPipe ART's ``art.tau_bench`` rollout (``TauBenchClient``) expects a tau-bench server:

- ``GET /scenarios?domain=airline&split=...`` lists ``{"scenarios": [{"domain", "task": {"id"}}]}``
  (the split's tasks; ``base``, all of them, by default);
- ``POST /environments`` ``{"domain": "airline", "task_id": ...}`` starts an episode (its own
  env, DB and customer) and answers ``{"id", "observation": "user: <opening>", "info"}`` with
  ``info["policy"]`` the env's system prompt (the reference agent's) and ``info["tools"]`` the
  env's tools (the reference's schemas);
- ``POST /environments/{id}/step`` ``{"action": str}`` applies one action: a tool call in the
  functional form ART writes (``get_user_details(user_id='x')``) or text for the customer (the
  customer answers server-side). It answers ``{"id", "observation", "info", "reward",
  "terminated", "truncated"}``: the observation is the new messages as ``role: content`` lines
  (``tool: ...``, ``user: ...``); the reward is 0 on every step but the last, which carries the
  env's grade (ART sums the step rewards); ``terminated`` is true on every ending (ART's loop
  stops only on it), ``truncated`` also on ``max_steps``, ``too_many_errors`` and
  ``user_error``; ``info`` has the termination reason and, at the end, ``reward_info``;
- ``DELETE /environments/{id}`` ends it: ``{"id", "deleted": true}``.

The customer is the server's (``airline-gym serve --user-model``; scripted by default): a
client's ``user_llm``/``user_llm_args`` are not used, and ``info["user_simulator"]`` says which
customer plays. So is the benchmark version (``airline-gym serve --benchmark tau3``; tau2 by
default): ``/scenarios`` and each new environment's ``info`` name it, and a create request whose
optional ``benchmark`` names the other version is refused (409) rather than played on this
one. At most ``max_environments`` episodes live at once (503 beyond; an episode whose opening
is still being made counts, so concurrent creates cannot overshoot); one idle for
``idle_timeout_seconds`` (the client's, else the server's ``--idle-timeout``) is released. An
unknown domain, task or environment is a 404 with the reason; a failure inside the env ends the
episode with the runner's failure policy (``agent_error``/``user_error``), never a 500.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import AirlineGymError, MissingDependencyError
from airline_gym.harness.runner import step_safely
from airline_gym.integrations.task_rows import check_row_benchmark

try:
    from fastapi import FastAPI, HTTPException
    from pydantic import BaseModel, Field
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError(
        "airline_gym.integrations.tau_bench_server", "fastapi", "openenv"
    ) from None

__all__ = ["DOMAIN", "TauBenchEnvironments", "add_tau_bench_routes"]

#: The one domain this server has.
DOMAIN = "airline"


class CreateEnvironment(BaseModel):
    """``POST /environments``: what ART's client sends."""

    domain: str
    task_id: str
    user_llm: str | None = None
    user_llm_args: dict[str, Any] | None = None
    retrieval_config: str | None = None
    retrieval_config_kwargs: dict[str, Any] | None = None
    idle_timeout_seconds: float | None = Field(None, ge=1)
    benchmark: str | None = None
    """The benchmark version the client means ("tau2" or "tau3"): refused unless the server's."""


class StepEnvironment(BaseModel):
    """``POST /environments/{id}/step``: one action, as text."""

    action: str


@dataclass
class _Live:
    """One episode in progress."""

    env: AirlineEnv
    idle_timeout: float
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    info: dict[str, Any] = field(default_factory=dict)


def _observation(messages: list[dict[str, Any]]) -> str:
    return "\n".join(f"{m['role']}: {m.get('content') or ''}" for m in messages)


def _step_info(info: dict[str, Any]) -> dict[str, Any]:
    kept = ("task_id", "step_count", "num_errors", "termination_reason", "error", "reward_info")
    return {key: info[key] for key in kept if key in info}


class TauBenchEnvironments:
    """The live episodes behind the routes (one :class:`AirlineEnv` each)."""

    def __init__(self, max_environments: int, idle_timeout: float, **env_kwargs: Any) -> None:
        if max_environments < 1:
            raise ValueError("max_environments must be at least 1")
        self.env_kwargs = env_kwargs
        self.max_environments = max_environments
        self.idle_timeout = idle_timeout
        self.live: dict[str, _Live] = {}
        self.starting = 0  # episodes whose opening is on its way: they hold a place already
        probe = AirlineEnv(**env_kwargs)
        self.benchmark = probe.benchmark
        self.task_set = probe.task_set
        user = probe.user
        self.user_simulator = repr(user) if hasattr(user, "model") else type(user).__name__
        probe.close()

    def scenarios(self, domain: str | None, split: str | None) -> dict[str, Any]:
        """The split's tasks as tau-bench scenarios."""
        if domain not in (None, DOMAIN):
            raise HTTPException(404, f"unknown domain {domain!r}: this server has {DOMAIN!r}")
        try:
            tasks = self.task_set.split(split or "base")
        except AirlineGymError as exc:
            raise HTTPException(400, str(exc)) from None
        scenarios = [{"domain": DOMAIN, "task": {"id": t.id}} for t in tasks]
        return {"scenarios": scenarios, "benchmark": self.benchmark}

    def _release_idle(self) -> None:
        now = time.monotonic()
        for env_id, live in list(self.live.items()):
            if now - live.last_used > live.idle_timeout and not live.lock.locked():
                self.live.pop(env_id).env.close()

    async def create(self, request: CreateEnvironment) -> dict[str, Any]:
        """Start the named task's episode; its opening and the agent's prompt and tools."""
        if request.domain != DOMAIN:
            raise HTTPException(404, f"unknown domain {request.domain!r}: this server has airline")
        try:
            check_row_benchmark(request.benchmark, self.benchmark)
        except AirlineGymError as exc:
            raise HTTPException(409, str(exc)) from None
        try:
            task = self.task_set[request.task_id]
        except AirlineGymError as exc:
            raise HTTPException(404, str(exc)) from None
        timeout = request.idle_timeout_seconds
        if timeout is not None and not math.isfinite(timeout):
            raise HTTPException(422, "idle_timeout_seconds must be finite")
        self._release_idle()
        if len(self.live) + self.starting >= self.max_environments:
            raise HTTPException(
                503, f"{self.max_environments} environments live or starting already"
            )
        self.starting += 1  # the place is taken before the slow opening, not after it
        try:
            env = AirlineEnv(**self.env_kwargs)
            try:
                observation, info = await asyncio.to_thread(env.reset, options={"task": task.id})
            except Exception as exc:
                env.close()
                raise HTTPException(503, f"the episode could not start: {exc}") from None
        finally:
            self.starting -= 1
        env_id = uuid.uuid4().hex
        self.live[env_id] = _Live(env, timeout or self.idle_timeout, info=info)
        return {
            "id": env_id,
            "observation": _observation(observation),
            "info": {
                "policy": info["system_prompt"],
                "tools": info["tools"],
                "protocol": info["protocol"],
                "user_simulator": self.user_simulator,
                "benchmark": self.benchmark,
                **_step_info(info),
            },
        }

    def _get(self, env_id: str) -> _Live:
        live = self.live.get(env_id)
        if live is None:
            raise HTTPException(404, f"no environment {env_id!r} (never created, deleted or idle)")
        return live

    async def step(self, env_id: str, request: StepEnvironment) -> dict[str, Any]:
        """Apply one action; the grade comes with the step that ends the episode."""
        live = self._get(env_id)
        async with live.lock:  # one step at a time per episode
            live.last_used = time.monotonic()
            observation, reward, terminated, truncated, info = await asyncio.to_thread(
                step_safely, live.env, request.action, live.info
            )
            live.info, live.last_used = info, time.monotonic()
        return {
            "id": env_id,
            "observation": _observation(observation),
            "info": _step_info(info),
            "reward": reward,
            "terminated": terminated or truncated,
            "truncated": truncated,
        }

    def delete(self, env_id: str) -> dict[str, Any]:
        """End the episode and free its env."""
        self._get(env_id)
        self.live.pop(env_id).env.close()
        return {"id": env_id, "deleted": True}


def add_tau_bench_routes(
    app: FastAPI, max_environments: int, idle_timeout: float, **env_kwargs: Any
) -> TauBenchEnvironments:
    """Add ART's tau-bench routes to ``app``; episodes use AirlineEnv(**env_kwargs)."""
    environments = TauBenchEnvironments(max_environments, idle_timeout, **env_kwargs)
    tags = ["tau-bench (ART)"]

    @app.get("/scenarios", tags=tags)
    async def scenarios(domain: str | None = None, split: str | None = None) -> dict[str, Any]:
        return environments.scenarios(domain, split)

    @app.post("/environments", tags=tags)
    async def create(request: CreateEnvironment) -> dict[str, Any]:
        return await environments.create(request)

    @app.post("/environments/{env_id}/step", tags=tags)
    async def step(env_id: str, request: StepEnvironment) -> dict[str, Any]:
        return await environments.step(env_id, request)

    @app.delete("/environments/{env_id}", tags=tags)
    async def delete(env_id: str) -> dict[str, Any]:
        return environments.delete(env_id)

    return environments
