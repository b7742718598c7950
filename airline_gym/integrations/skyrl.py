"""SkyRL adapter: the airline domain as a ``skyrl_gym`` text env, registered as ``airline_gym``.

SkyRL's generator builds one env per trajectory with ``skyrl_gym.make(env_class,
env_config=..., extras=row)`` (the dataset row's columns other than ``prompt`` and
``env_class``), calls ``init(prompt)`` for the first prompt, then ``step(text)`` with each decoded
model reply until ``done``. :class:`AirlineTextEnv`:

- ``init`` resets an :class:`~airline_gym.env.AirlineEnv` to the episode the row names
  (``extra_info.task_id`` / ``extra_info.seed`` / ``extra_info.benchmark``, as :func:`dataset_rows`
writes them) and returns
  the env's system prompt and history (the customer's opening turn) in place of the row's prompt;
  its metadata holds the env's ``tools`` (the reference's schemas) for the chat template
  (``generator.chat_template_kwargs.tools``);
- ``step`` reads the raw reply (:func:`~airline_gym.integrations.tool_text.parse_reply`:
  ``<tool_call>`` blocks, several per turn, and plain text for the customer) and returns the tool
  results (role ``tool``) and the customer's turn (role ``user``) as chat observations; an action
  the env cannot read comes back as a ``user`` turn ``Error: ...``. ``reward`` is 0 until the
  episode ends, then the env's grade (DB check x communicate check); ``done`` is the env's
  ``terminated or truncated``; a reply after SkyRL's ``max_turns`` ends the episode as
  ``max_steps`` (graded 0);
- ``get_metrics`` gives steps, tool calls, tool errors and a 0/1 metric per termination reason.

``env_config`` (``environment.skyrl_gym.airline_gym`` in SkyRL's config) holds AirlineEnv's
arguments: ``benchmark`` (``"tau2"`` by default, or ``"tau3"``: the task set and the customer's
guidelines as one unit; a row listed for the other version is refused), ``user``
(``"scripted"`` by default, offline; ``"llm"`` with ``user_model`` and ``user_llm_args``),
``protocol``, ``max_steps``, ``max_errors``, ``tasks``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from airline_gym.domain.grading import MAX_STEPS
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import ConfigError, require
from airline_gym.harness.runner import step_safely
from airline_gym.integrations import task_rows
from airline_gym.integrations.episode_summary import episode_metrics, episode_summary
from airline_gym.integrations.task_rows import check_row_benchmark
from airline_gym.integrations.tool_text import parse_reply

require("skyrl_gym", "skyrl", "airline_gym.integrations.skyrl")  # names the extra
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput  # noqa: E402
from skyrl_gym.envs.registration import register, registry  # noqa: E402

__all__ = ["ENV_ID", "AirlineTextEnv", "dataset_rows"]

#: The ``env_class`` SkyRL's dataset rows name.
ENV_ID = "airline_gym"
_ENV_ARGS = (
    "benchmark",
    "user",
    "user_model",
    "user_llm_args",
    "protocol",
    "max_steps",
    "max_errors",
    "tasks",
)


#: SkyRL dataset rows, one per ``(task id, seed)`` (the episodes TRL's and verifiers' list):
#: ``extra_info`` holds ``task_id``, ``seed`` and ``benchmark``; the ``prompt`` is a placeholder
#: (:meth:`AirlineTextEnv.init` replaces it with the env's). Arguments as
#: :func:`~airline_gym.integrations.task_rows.dataset_rows`.
dataset_rows = functools.partial(task_rows.dataset_rows, "skyrl")


def _chat(observation: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The env's new messages as chat turns for the model's template."""
    turns = []
    for message in observation:
        role = message["role"] if message["role"] in ("tool", "user") else "user"
        turns.append({"role": role, "content": str(message.get("content") or "")})
    return turns


class AirlineTextEnv(BaseTextEnv):
    """One airline episode, played from the model's raw text replies (see the module doc)."""

    def __init__(
        self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        config = dict(env_config or {})
        unknown = sorted(set(config) - set(_ENV_ARGS))
        if unknown:
            raise ConfigError(f"unknown airline_gym env_config keys: {', '.join(unknown)}")
        config.setdefault("user", "scripted")
        if config.get("user_llm_args") is not None:
            config["user_llm_args"] = dict(config["user_llm_args"])
        extras = dict(extras or {})
        row = {**extras, **dict(extras.get("extra_info") or {})}
        if row.get("task_id") is None:
            raise ConfigError("an airline_gym row needs extra_info.task_id (see dataset_rows)")
        self.task_id = str(row["task_id"])
        self.seed = None if row.get("seed") is None else int(row["seed"])
        self.max_turns = int(extras.get("max_turns") or 0)  # SkyRL's generator.max_turns
        self.env = AirlineEnv(**config)
        check_row_benchmark(row.get("benchmark"), self.env.benchmark)
        self.summary: dict[str, Any] | None = None

    def init(self, prompt: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset to the row's episode; the prompt is the env's system prompt and history."""
        _, info = self.env.reset(seed=self.seed, options={"task": self.task_id})
        self.turns = 0
        self.summary = None
        return [dict(m) for m in info["messages"]], {"tools": info["tools"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Apply one raw model reply; the grade comes with the step that ends the episode."""
        if self.env.episode is None:
            raise RuntimeError("call init() before step()")
        self.turns += 1
        observation, reward, terminated, truncated, info = step_safely(
            self.env, parse_reply(action)
        )
        done = terminated or truncated
        if not done and self.max_turns and self.turns >= self.max_turns:
            cause = f"SkyRL's max_turns ({self.max_turns}) reached"
            _, reward, _, _, info = self.env.abort(cause, MAX_STEPS)
            done = True
        metadata: dict[str, Any] = {"termination_reason": info.get("termination_reason")}
        if done:
            self.summary = episode_summary(self.env, self.seed)
            metadata["reward_info"] = self.summary["reward_info"]
        return BaseTextEnvStepOutput(
            observations=[] if done else _chat(observation),
            reward=float(reward),
            done=done,
            metadata=metadata,
        )

    def get_metrics(self) -> dict[str, Any]:
        """Steps, tool calls, tool errors, the termination reason and a 0/1 metric for each
        (SkyRL averages the numbers over episodes); empty while the episode runs."""
        if self.summary is None:
            return {}
        reason = self.summary["termination_reason"]
        return {**episode_metrics(self.summary), "termination_reason": reason}

    def close(self) -> None:
        """Release the env."""
        self.env.close()


if ENV_ID not in registry:
    register(id=ENV_ID, entry_point=f"{__name__}:AirlineTextEnv")
