"""The env as an OpenEnv environment: served by ``openenv-core``'s own HTTP/WebSocket server.

Needs the ``openenv`` extra (``pip install "airline-gym[openenv]"``). ``airline-gym serve`` runs
:func:`airline_gym.integrations.openenv_server.make_app` with uvicorn; every WebSocket session
gets its own :class:`AirlineOpenEnv` (its own :class:`~airline_gym.env.AirlineEnv`, DB and
customer), so sessions never share an episode.
The wire format is the Python env's, field for field:

- **action** (:class:`AirlineAction`): ``{"message": <what AirlineEnv.step accepts>}``, i.e. an
  OpenAI assistant message (``content`` and/or ``tool_calls``), a bare ``{"name", "arguments"}``
  call, or a tau2-gym string. A malformed one is an error observation, as in process.
- **observation** (:class:`AirlineObservation`): ``messages`` (the new messages ``step`` returned),
  ``reward``, ``terminated``, ``truncated``, ``done`` (either), and ``info`` (the env's info dict:
  full history, tools, system prompt, ``reward_info`` on the last step...).
- **reset** takes ``seed``, ``task`` (a task id; absent: drawn from the split with ``seed``),
  ``episode_id`` and ``benchmark`` (optional: the version the client means; one other than the
  session's is refused, never played); any other key is refused with an error naming it (as
  ``AirlineEnv.reset`` refuses an unknown option), never dropped. The version is the server's
  (``AirlineOpenEnv(benchmark="tau3")``, ``airline-gym serve --benchmark tau3``; tau2 by
  default): its tasks and customer guidelines.
- **work per step is bounded**: an action with more than ``max_tool_calls`` tool calls (default
  :data:`DEFAULT_MAX_TOOL_CALLS`) is refused before it reaches the episode: the observation is one
  ``Error: ...`` system message and the episode (history, step and error counts) is unchanged.
- **state** (:class:`AirlineState`): ``episode_id``, ``step_count``, ``task_id``, ``benchmark``,
  ``num_errors``, ``termination_reason``, ``done``.

With OpenEnv's generic client::

    from openenv import GenericEnvClient

    async with GenericEnvClient(base_url="http://127.0.0.1:8000") as client:
        result = await client.reset(task="17", seed=0)
        result = await client.step({"message": {"role": "assistant", "content": "Hi!"}})
        print(result.observation["messages"], result.reward, result.done)
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from airline_gym.env.airline_env import TRUNCATING, AirlineEnv
from airline_gym.errors import ConfigError
from airline_gym.integrations.openenv_core import (
    Action,
    Environment,
    EnvironmentMetadata,
    Observation,
    State,
)
from airline_gym.integrations.task_rows import check_row_benchmark

#: Tool calls one action may carry on the server (real models send a handful; 8,000 cost seconds).
DEFAULT_MAX_TOOL_CALLS = 32
#: The keywords ``reset`` takes; any other is refused.
RESET_KEYS = ("seed", "task", "episode_id", "benchmark")

__all__ = [
    "DEFAULT_MAX_TOOL_CALLS",
    "RESET_KEYS",
    "AirlineAction",
    "AirlineObservation",
    "AirlineOpenEnv",
    "AirlineState",
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
    benchmark: str | None = None
    num_errors: int = 0
    termination_reason: str | None = None
    done: bool = False


class NoEpisodeError(ConfigError, RuntimeError):
    """A step before any reset (a client's mistake: reported, never a server error)."""


class AirlineOpenEnv(Environment[AirlineAction, AirlineObservation, AirlineState]):
    """An OpenEnv ``Environment`` over one :class:`AirlineEnv` (one per server session)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS, **env_kwargs: Any) -> None:
        super().__init__()
        if isinstance(max_tool_calls, bool) or not isinstance(max_tool_calls, int):
            raise ConfigError(f"max_tool_calls must be a whole number, got {max_tool_calls!r}")
        if max_tool_calls < 1:
            raise ConfigError(f"max_tool_calls must be at least 1, got {max_tool_calls}")
        self.max_tool_calls = max_tool_calls
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
        benchmark: str | None = None,
        **unknown: Any,
    ) -> dict[str, Any]:
        """``AirlineEnv.reset``'s arguments for OpenEnv's ``reset`` arguments (checked)."""
        if unknown:  # a typo (``tsak``, ``sede``) must not silently start a random task
            names = ", ".join(sorted(map(repr, unknown)))
            raise ConfigError(f"unknown reset key(s) {names}; known: {', '.join(RESET_KEYS)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ConfigError(f"reset seed must be a whole number >= 0 or null, got {seed!r}")
        if task is not None and (isinstance(task, bool) or not isinstance(task, str | int)):
            raise ConfigError(f"reset task must be a task id (string or number), got {task!r}")
        if episode_id is not None and not isinstance(episode_id, str):
            raise ConfigError(f"reset episode_id must be a string, got {episode_id!r}")
        check_row_benchmark(benchmark, self.env.benchmark)  # never play on another version
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
        benchmark: str | None = None,
        **kwargs: Any,
    ) -> AirlineObservation:
        """Start an episode of ``task`` (a task id; None: drawn from the split with ``seed``).

        Raises :class:`~airline_gym.errors.ConfigError` for a key other than :data:`RESET_KEYS`
        and for a ``benchmark`` other than the session's.
        """
        args = self._reset_args(seed, episode_id, task, benchmark, **kwargs)
        return self._after_reset(*self.env.reset(**args))

    async def reset_async(self, **kwargs: Any) -> AirlineObservation:
        """As :meth:`reset` (the same keywords), the customer's LLM awaited on the caller's loop."""
        return self._after_reset(*await self.env.areset(**self._reset_args(**kwargs)))

    def _refusal(self, action: AirlineAction) -> AirlineObservation | None:
        """The error observation for an action this server does not run, else ``None``."""
        if self.env.episode is None:
            raise NoEpisodeError("no episode to step: send reset first")
        calls = action.message.get("tool_calls") if isinstance(action.message, dict) else None
        if not isinstance(calls, list) or len(calls) <= self.max_tool_calls:
            return None
        text = (
            f"Error: invalid action: {len(calls):,} tool calls in one action; this server runs "
            f"at most {self.max_tool_calls} (airline-gym serve --max-tool-calls); not run"
        )
        episode = self.env.episode
        truncated = episode.done and episode.termination_reason in TRUNCATING
        terminated = episode.done and not truncated
        info = self.env._info()
        return self._observation(
            [{"role": "system", "content": text}], 0.0, terminated, truncated, info
        )

    def step(
        self, action: AirlineAction, timeout_s: float | None = None, **kwargs: Any
    ) -> AirlineObservation:
        """Apply one agent message; the observation is what ``AirlineEnv.step`` returned.

        An action over ``max_tool_calls`` gets an error observation and changes nothing.
        """
        refusal = self._refusal(action)
        return refusal or self._observation(*self.env.step(action.message))

    async def step_async(
        self, action: AirlineAction, timeout_s: float | None = None, **kwargs: Any
    ) -> AirlineObservation:
        """As :meth:`step`, with the customer's LLM awaited (on the caller's event loop)."""
        refusal = self._refusal(action)
        return refusal or self._observation(*await self.env.astep(action.message))

    @property
    def state(self) -> AirlineState:
        """The session's episode so far."""
        episode = self.env.episode
        if episode is None:
            return AirlineState(episode_id=self._episode_id, benchmark=self.env.benchmark)
        return AirlineState(
            episode_id=self._episode_id,
            benchmark=self.env.benchmark,
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
