"""The env as an OpenEnv environment: served by ``openenv-core``'s own HTTP/WebSocket server.

Needs the ``openenv`` extra (``pip install "airline-gym[openenv]"``). ``airline-gym serve`` runs
:func:`make_app` with uvicorn; every WebSocket session gets its own :class:`AirlineOpenEnv` (its
own :class:`~airline_gym.env.AirlineEnv`, DB and customer), so sessions never share an episode.
The wire format is the Python env's, field for field:

- **action** (:class:`AirlineAction`): ``{"message": <what AirlineEnv.step accepts>}``, i.e. an
  OpenAI assistant message (``content`` and/or ``tool_calls``), a bare ``{"name", "arguments"}``
  call, or a tau2-gym string. A malformed one is an error observation, as in process.
- **observation** (:class:`AirlineObservation`): ``messages`` (the new messages ``step`` returned),
  ``reward``, ``terminated``, ``truncated``, ``done`` (either), and ``info`` (the env's info dict:
  full history, tools, system prompt, ``reward_info`` on the last step...).
- **reset** takes ``seed`` and ``task`` (a task id; absent: drawn from the split with ``seed``).
- **state** (:class:`AirlineState`): ``episode_id``, ``step_count``, ``task_id``, ``num_errors``,
  ``termination_reason``, ``done``.

With OpenEnv's generic client::

    from openenv import GenericEnvClient

    async with GenericEnvClient(base_url="http://127.0.0.1:8000") as client:
        result = await client.reset(task="17", seed=0)
        result = await client.step({"message": {"role": "assistant", "content": "Hi!"}})
        print(result.observation["messages"], result.reward, result.done)
"""

from __future__ import annotations

import functools
import logging
import uuid
from typing import Any

from airline_gym.errors import MissingDependencyError

try:
    from openenv.core.env_server import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        Action,
        Environment,
        Observation,
        State,
    )
    from openenv.core.env_server import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        create_fastapi_app as _create_fastapi_app,
    )
    from openenv.core.env_server.types import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        EnvironmentMetadata,
    )
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError(
        "airline_gym.integrations.openenv", "openenv-core", "openenv"
    ) from None
from pydantic import Field
from starlette.websockets import WebSocketDisconnect

from airline_gym.env.airline_env import AirlineEnv

__all__ = [
    "AirlineAction",
    "AirlineObservation",
    "AirlineOpenEnv",
    "AirlineState",
    "make_app",
    "quiet_clean_disconnects",
]


class AirlineAction(Action):
    """One agent message, in any form :meth:`AirlineEnv.step` accepts."""

    message: dict[str, Any] | str = Field(
        description="An OpenAI assistant message {role, content, tool_calls}, a bare "
        "{name, arguments} tool call, or a tau2-gym action string."
    )


class AirlineObservation(Observation):
    """What :meth:`AirlineEnv.step` returned, plus OpenEnv's ``done`` and ``reward``."""

    messages: list[dict[str, Any]] = Field(default_factory=list, description="New messages")
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = Field(default_factory=dict, description="AirlineEnv's info dict")


class AirlineState(State):
    """The session's episode: task, counters and how it ended."""

    task_id: str | None = None
    num_errors: int = 0
    termination_reason: str | None = None
    done: bool = False


class AirlineOpenEnv(Environment[AirlineAction, AirlineObservation, AirlineState]):
    """An OpenEnv ``Environment`` over one :class:`AirlineEnv` (one per server session)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, **env_kwargs: Any) -> None:
        super().__init__()
        self.env = AirlineEnv(**env_kwargs)
        self._episode_id: str | None = None

    def _observation(
        self,
        messages: list[dict[str, Any]],
        reward: float | None,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> AirlineObservation:
        return AirlineObservation(
            messages=messages,
            reward=reward,
            terminated=terminated,
            truncated=truncated,
            done=terminated or truncated,
            info=info,
        )

    def _reset_args(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | int | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        """``AirlineEnv.reset``'s arguments for OpenEnv's ``reset`` arguments."""
        self._episode_id = episode_id or str(uuid.uuid4())
        return {"seed": seed, "options": None if task is None else {"task": task}}

    def _after_reset(self, observation: Any, info: dict[str, Any]) -> AirlineObservation:
        episode = self.env.episode
        done = episode is not None and episode.done  # the customer failed to open
        return self._observation(list(observation), None, False, done, info)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | int | None = None,
        **kwargs: Any,
    ) -> AirlineObservation:
        """Start an episode of ``task`` (a task id; None: drawn from the split with ``seed``)."""
        return self._after_reset(*self.env.reset(**self._reset_args(seed, episode_id, task)))

    async def reset_async(self, **kwargs: Any) -> AirlineObservation:
        """As :meth:`reset` (the same keywords), not blocking the server on the customer's LLM."""
        return self._after_reset(*await self.env.areset(**self._reset_args(**kwargs)))

    def step(
        self, action: AirlineAction, timeout_s: float | None = None, **kwargs: Any
    ) -> AirlineObservation:
        """Apply one agent message; the observation is what ``AirlineEnv.step`` returned."""
        return self._observation(*self.env.step(action.message))

    async def step_async(
        self, action: AirlineAction, timeout_s: float | None = None, **kwargs: Any
    ) -> AirlineObservation:
        """As :meth:`step`, with the customer's LLM called without blocking the server."""
        return self._observation(*await self.env.astep(action.message))

    @property
    def state(self) -> AirlineState:
        """The session's episode so far."""
        episode = self.env.episode
        if episode is None:
            return AirlineState(episode_id=self._episode_id)
        return AirlineState(
            episode_id=self._episode_id,
            step_count=episode.step_count,
            task_id=episode.task.id,
            num_errors=episode.num_errors,
            termination_reason=episode.termination_reason,
            done=episode.done,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        """Name and description shown by OpenEnv's ``/metadata``."""
        return EnvironmentMetadata(
            name="airline-gym",
            description="The tau2-bench airline customer-service domain: tool calls and "
            "messages to a simulated customer; reward = DB check x communicate check.",
            version="0.1.0",
        )

    def close(self) -> None:
        """Release the env (called by OpenEnv when the session ends)."""
        self.env.close()


def make_app(max_sessions: int = 256, **env_kwargs: Any) -> Any:
    """OpenEnv's FastAPI app serving :class:`AirlineOpenEnv` sessions built with ``env_kwargs``.

    At most ``max_sessions`` WebSocket sessions live at once (each one episode at a time).
    """
    factory = functools.partial(AirlineOpenEnv, **env_kwargs)
    return _create_fastapi_app(
        factory, AirlineAction, AirlineObservation, max_concurrent_envs=max_sessions
    )


class _CleanDisconnects(logging.Filter):
    """Drops uvicorn's error record for a WebSocket session its client ended normally."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], WebSocketDisconnect))


def quiet_clean_disconnects(logger: str = "uvicorn.error") -> None:
    """Stop a traceback being logged each time a client closes its session (openenv-core 0.3).

    openenv-core's WebSocket handler closes the socket in a ``finally`` that expects a
    ``RuntimeError`` when the client has already gone, but starlette raises
    ``WebSocketDisconnect``, which uvicorn logs as "Exception in ASGI application" for a session
    that ended normally (OpenEnv issue 1159). Only that exception type is dropped.
    """
    target = logging.getLogger(logger)
    if not any(isinstance(f, _CleanDisconnects) for f in target.filters):
        target.addFilter(_CleanDisconnects())
