"""Reward shaping as Gymnasium wrappers, all over one :func:`~airline_gym.domain.grading.db_credit`.

Wrap an env on the official reward (the default); each wrapper changes only the reward:

- :class:`PartialReward`: the final step's grade becomes partial credit (what the env's
  ``reward="partial"`` gives);
- :class:`ErrorPenalty`: ``penalty`` off each step per tool error made in it (the env's
  ``error_penalty=``);
- :class:`ProgressReward`: ``scale`` times each gain in the best DB credit reached so far, paid
  when a write makes it (training only: it reads the gold DB).

>>> import gymnasium as gym
>>> from airline_gym.wrappers import ErrorPenalty, PartialReward
>>> env = ErrorPenalty(PartialReward(gym.make("AirlineScripted-v0", task=0)), penalty=0.1)
>>> _ = env.reset(seed=0)
>>> call = {"id": "c1", "type": "function", "function": {"name": "nope", "arguments": "{}"}}
>>> _, reward, *_ = env.step({"role": "assistant", "content": None, "tool_calls": [call]})
>>> reward
-0.1
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from airline_gym.domain.grading import db_credit, partial_credit
from airline_gym.errors import ConfigError
from airline_gym.numbers import finite_number

__all__ = ["ErrorPenalty", "PartialReward", "ProgressReward"]

Step = tuple[Any, float, bool, bool, dict[str, Any]]


def _episode(env: gym.Env[Any, Any]) -> Any:
    """The running episode of the ``AirlineEnv`` inside ``env``."""
    episode = getattr(env.unwrapped, "episode", None)
    if episode is None:
        raise ConfigError("this wrapper needs an AirlineEnv (reset first)")
    return episode


class PartialReward(gym.Wrapper[Any, Any, Any, Any]):
    """Partial credit at the end: half for the DB, half for the required facts said.

    A passing episode still scores 1; a premature ending (step or error budget, a failed
    customer) still scores 0. See :func:`~airline_gym.domain.grading.partial_credit`.
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        """Wrap ``env``, which must be on the official reward (no shaping twice)."""
        super().__init__(env)
        config = getattr(env.unwrapped, "reward_config", None)
        if config is not None and config.mode != "official":
            raise ConfigError(f'PartialReward needs reward="official"; the env has {config.mode!r}')

    def step(self, action: Any) -> Step:
        """Step; on the last step swap the official grade for partial credit."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        shaped = float(reward)
        if "reward_info" in info:  # the last step: the env graded the episode
            episode = _episode(self.env)
            grade = episode.grade()
            shaped += partial_credit(grade, episode.task, episode.db) - grade.reward
        return observation, shaped, terminated, truncated, info


class ErrorPenalty(gym.Wrapper[Any, Any, Any, Any]):
    """Subtract ``penalty`` per tool error, on the step the error happens."""

    def __init__(self, env: gym.Env[Any, Any], penalty: float = 0.1) -> None:
        """Wrap ``env``; ``penalty`` must be a finite number >= 0."""
        super().__init__(env)
        self.penalty = finite_number("penalty", penalty, minimum=0)
        self._errors = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset; the error count starts again."""
        observation, info = self.env.reset(**kwargs)
        self._errors = int(info.get("num_errors", 0))
        return observation, info

    def step(self, action: Any) -> Step:
        """Step, charging the errors this step added."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        errors = int(info.get("num_errors", self._errors))
        shaped = float(reward) - self.penalty * (errors - self._errors)
        self._errors = errors
        return observation, shaped, terminated, truncated, info


class ProgressReward(gym.Wrapper[Any, Any, Any, Any]):
    """Pay DB progress when it is made: ``scale`` times each gain in the best DB credit.

    Keep the env on ``reward="official"``. A correct write is paid when it is made; a harmful
    one is not charged here (the official reward at the end does that), so exploring is never
    punished. The episode's shaping total is the best credit reached. It reads the task's gold
    DB: a training signal only; measure with the official reward.
    """

    def __init__(self, env: gym.Env[Any, Any], scale: float = 1.0) -> None:
        """Wrap ``env`` (an ``AirlineEnv``, possibly inside other wrappers); ``scale`` must be a
        finite number >= 0."""
        super().__init__(env)
        self.scale = finite_number("scale", scale, minimum=0)
        self._best = 0.0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset; the starting credit counts as reached."""
        observation, info = self.env.reset(**kwargs)
        self._best = self.db_credit()
        return observation, info

    def step(self, action: Any) -> Step:
        """Step, adding ``scale`` times the gain in best DB credit."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        best = max(self._best, self.db_credit())
        gain, self._best = best - self._best, best
        return observation, float(reward) + self.scale * gain, terminated, truncated, info

    def db_credit(self) -> float:
        """The DB credit of the episode's current DB, in [0, 1]."""
        episode = _episode(self.env)
        return db_credit(episode.task, episode.db)
