"""stable-baselines3 glue: PPO on the candidate-action wrapper, and its evaluation.

The wrappers themselves live in :mod:`airline_gym.wrappers` (re-exported here for the old
import path)::

    from airline_gym.integrations.sb3 import make_env, train_ppo

    model, curve = train_ppo(task=17, timesteps=60_000)

:func:`train_ppo` and :func:`evaluate` import stable-baselines3 (and so torch) lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from airline_gym import wrappers
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, check_benchmark
from airline_gym.errors import require
from airline_gym.wrappers import *  # noqa: F403  (the wrappers' old import path)
from airline_gym.wrappers import CandidateActionWrapper, ProgressReward

if TYPE_CHECKING:
    from stable_baselines3 import PPO
    from stable_baselines3.common.base_class import BaseAlgorithm

__all__ = [*wrappers.__all__, "evaluate", "make_env", "train_ppo"]


# --- training helpers (stable-baselines3 is imported lazily) -------------------------------------
def make_env(
    task: str | int = 17,
    n: int = 40,
    padding: str = "cycle",
    max_actions: int = 30,
    progress_reward: float = 0.0,
    **env_kwargs: Any,
) -> gym.Env[np.ndarray, np.int64]:
    """``AirlineScripted-v0`` on ``task`` wrapped for SB3, plus :class:`ProgressReward` when
    ``progress_reward`` > 0; ``env_kwargs`` go to ``gym.make`` (e.g. ``benchmark="tau3"``).

    The customer is the keyword one (``user_kwargs={"intents": False}`` unless a ``user`` or
    ``user_kwargs`` is given): the candidate set's fixed messages were made for it, and the
    customer that plays a task's intent hangs up on an agent that stalls, which a policy
    choosing among candidates mostly is.
    """
    import airline_gym  # noqa: F401  (registers the env ids)

    if "user" not in env_kwargs:  # the env id's scripted customer
        env_kwargs.setdefault("user_kwargs", {"intents": False})

    env: gym.Env[Any, Any] = CandidateActionWrapper(
        gym.make("AirlineScripted-v0", task=task, **env_kwargs),
        n=n,
        padding=padding,
        max_actions=max_actions,
    )
    if progress_reward > 0:
        env = ProgressReward(env, scale=progress_reward)
    return env


def evaluate(
    policy: BaseAlgorithm | Callable[[np.ndarray], Any],
    env: gym.Env[np.ndarray, np.int64],
    episodes: int = 20,
    deterministic: bool = False,
    seed: int = 0,
) -> list[float]:
    """The official tau2 reward (DB x communicate, in {0, 1}) of ``episodes`` episodes.

    ``policy`` is an SB3 model or a function observation -> action index. The grade is read from
    ``info["reward_info"]``, so shaping options of ``env`` do not leak in; an episode the
    wrapper truncates scores 0. A model with ``deterministic=False`` samples from torch's RNG:
    seed it (``stable_baselines3.common.utils.set_random_seed``) for reproducible numbers.
    """
    rewards = []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed + episode)
        done, info = False, dict[str, Any]()
        while not done:
            if hasattr(policy, "predict"):
                action, _ = policy.predict(observation, deterministic=deterministic)
            else:
                action = policy(observation)
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        rewards.append(float(info.get("reward_info", {}).get("reward", 0.0)))
    return rewards


#: PPO settings measured to learn task 17 in 30k-60k steps on every seed tried (see
#: examples/sb3_ppo.py); the learning rate decays linearly to 0.
PPO_KWARGS: dict[str, Any] = {
    "n_steps": 64,
    "batch_size": 128,
    "n_epochs": 10,
    "ent_coef": 0.01,
    "gamma": 0.99,
}
LEARNING_RATE = 1e-3


def train_ppo(
    task: str | int = 17,
    timesteps: int = 60_000,
    seed: int = 0,
    n_envs: int = 8,
    eval_episodes: int = 20,
    eval_every: int = 5_000,
    deterministic_eval: bool = False,
    padding: str = "cycle",
    log: Callable[[str], None] | None = print,
    benchmark: str = DEFAULT_BENCHMARK,
    **ppo_kwargs: Any,
) -> tuple[PPO, list[tuple[int, float]]]:
    """Train SB3's PPO (``MlpPolicy``) on one task of ``benchmark`` (``"tau2"``, the default,
    or ``"tau3"``) with the scripted customer.

    Training envs add :class:`ProgressReward`; every ``eval_every`` timesteps (and before
    training) the policy is scored with :func:`evaluate` on ``eval_episodes`` episodes of a plain
    env (official reward). Returns the model and that learning curve, ``[(timesteps,
    mean_reward), ...]``; ``log`` gets one line per point. Seeded: same inputs, same numbers.
    """
    benchmark = check_benchmark(benchmark)  # before any env or model is built
    require("stable_baselines3", "sb3", "train_ppo")
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.utils import set_random_seed

    set_random_seed(seed)
    venv = make_vec_env(
        lambda: make_env(task, padding=padding, progress_reward=1.0, benchmark=benchmark),
        n_envs=n_envs,
        seed=seed,
    )
    eval_env = make_env(task, padding=padding, benchmark=benchmark)
    kwargs = {**PPO_KWARGS, "learning_rate": lambda remaining: LEARNING_RATE * remaining}
    model = PPO("MlpPolicy", venv, seed=seed, verbose=0, **{**kwargs, **ppo_kwargs})
    curve: list[tuple[int, float]] = []

    def point(steps: int) -> None:
        rewards = evaluate(model, eval_env, eval_episodes, deterministic_eval, seed=seed)
        curve.append((steps, float(np.mean(rewards))))
        if log is not None:
            log(f"timesteps={steps:>7d}  mean_reward={curve[-1][1]:.3f}")

    class Curve(BaseCallback):
        def _on_rollout_start(self) -> None:  # after each update: the policy just changed
            if self.num_timesteps >= len(curve) * eval_every:
                point(self.num_timesteps)

        def _on_step(self) -> bool:
            return True

    point(0)
    model.learn(timesteps, callback=Curve())
    point(model.num_timesteps)
    return model, curve
