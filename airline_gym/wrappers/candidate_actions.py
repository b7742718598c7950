"""``Discrete`` candidate actions and ``Box`` feature observations over ``AirlineEnv``.

Classic RL libraries (stable-baselines3, ...) have no text spaces, so
:class:`CandidateActionWrapper` turns the chat env into a classic RL problem:

>>> import gymnasium as gym
>>> from airline_gym.wrappers import CandidateActionWrapper
>>> env = CandidateActionWrapper(gym.make("AirlineScripted-v0", task=17))
>>> observation, info = env.reset(seed=0)
>>> env.action_space, observation.shape == env.observation_space.shape
(Discrete(40), True)
>>> str(env.decode(0)), info["num_candidates"]
('done()', 5)

**Actions.** Before every step the wrapper rebuilds a *candidate set* of concrete assistant
messages from what the agent has observed so far (ids in the customer's messages, records in
tool results) and the tools' argument shapes, in a deterministic order:

1. fixed: ``done``; a message asking for the user id, reservation id and payment method; a
   "shall I go ahead?" confirmation message; ``transfer_to_human_agents``;
2. reads: ``get_user_details`` for every user id seen, ``get_reservation_details`` for every
   reservation id seen (in the order first seen), ``get_flight_status`` for the flights of the
   focus reservation;
3. writes on the *focus* reservation (the reservation record observed last, unless cancelled):
   change the cabin to each other cabin (same flights); set one passenger to the account holder
   (name and date of birth from the profile) or one of their saved passengers; add 1 to 3
   checked bags, the paid ones computed with the policy's allowance for the owner's membership
   and the current cabin; cancel. Paid writes are offered once per payment method the customer
   named (by id or kind, e.g. "gift card"), else with the method that paid for the
   reservation, else with every non-certificate method on file.

The space is ``Discrete(n)`` (default 40: reading every reservation of each of the 50 tasks'
customers gives at most 34 candidates).
With ``padding="cycle"`` (default) index ``i`` past the candidate count ``k`` sends candidate
``i % k``, so every index acts; with ``padding="noop"`` it does nothing and costs one action of
the wrapper's budget (``max_actions``, default 30, then ``truncated``).
:meth:`CandidateActionWrapper.action_masks` marks the ``k`` distinct slots, for sb3-contrib's
``MaskablePPO``. Plain PPO learns with both, but with "noop" it can settle on the no-op slots,
the one choice that never changes anything (1 of 4 seeds with the example's settings, about half
with others we tried; "cycle": 8 of 8), so "cycle" is the default.

**Observations.** A ``Box(0, 1)`` float32 vector: per slot, whether it holds a distinct
candidate, whether that exact action was already taken, whether its main argument (cabin, bag
count, person, id, ...) and its payment method were mentioned by the customer, and a one-hot of
its kind (:data:`KINDS`; a "cycle" repeat carries its candidate's features); then tool-call
counts, step fraction, error count, whether the last tool call failed, the kind of the last
tool result, the candidate count, and the focus reservation's cabin, passenger and bag counts,
status and owner's membership.

**Limits, plainly.** This is a toy bridge that lets classic RL algorithms run on a text env; it
is not how to build an airline agent. It cannot express arbitrary tool arguments: no bookings,
no moves to other flights, no searches, no certificates, no free-text replies beyond two fixed
messages, one passenger changed per call. Candidate generation is heuristic (regexes over the
customer's text, the last reservation read is the only one that can be modified, the payment
rule above) and covers only the kinds of writes airline tasks commonly need, so many tasks
cannot be solved through it at all. Candidates past ``n`` are cut. A policy learnt on one task
does not transfer to others in any meaningful way.

:class:`~airline_gym.wrappers.ProgressReward` is opt-in training-only shaping (it reads the gold
DB). The wrappers need only Gymnasium and NumPy; PPO lives in :mod:`airline_gym.integrations.sb3`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from airline_gym.env.errors import ended
from airline_gym.errors import ConfigError
from airline_gym.wrappers.candidates import Candidate, Knowledge, generate_candidates
from airline_gym.wrappers.features import GLOBAL_SIZE, SLOT_SIZE, Progress, observation

__all__ = ["INFO_KEYS", "PADDINGS", "CandidateActionWrapper"]

#: The env's info keys the wrapper passes on by default.
INFO_KEYS = ("task_id", "step_count", "num_errors", "termination_reason", "error", "reward_info")
PADDINGS = ("cycle", "noop")


class CandidateActionWrapper(gym.Wrapper[np.ndarray, np.int64, list[dict[str, Any]], Any]):
    """``Discrete(n)`` candidate actions and a ``Box`` feature observation over ``AirlineEnv``.

    See the module docstring for the candidates, the features, the padding modes and the
    limits. ``info`` keeps only the light keys (:data:`INFO_KEYS`; SB3's ``DummyVecEnv``
    deep-copies every info dict) plus ``action`` (the candidate sent) or ``noop``; pass
    ``full_info=True`` for the env's whole info (transcript, tool schemas, prompt).
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        n: int = 40,
        padding: str = "cycle",
        max_actions: int = 30,
        noop_penalty: float = 0.0,
        full_info: bool = False,
    ) -> None:
        """Wrap ``env`` (an ``AirlineEnv``, possibly inside ``gym.make``'s wrappers).

        Args:
            env: The airline env.
            n: Number of action slots; candidates past ``n`` are dropped.
            padding: What indices past the candidate count do: "cycle" (index ``i`` sends
                candidate ``i % count``) or "noop" (nothing is sent; it costs one action).
            max_actions: Wrapper steps per episode (no-ops included) before truncation.
            noop_penalty: Reward subtracted for a no-op (``padding="noop"``).
            full_info: Pass the env's whole info dict through.
        """
        super().__init__(env)
        if n < 4 or max_actions < 1:
            raise ConfigError("n must be at least 4 and max_actions at least 1")
        if padding not in PADDINGS:
            raise ConfigError(f"padding must be one of {PADDINGS}; got {padding!r}")
        self.n = n
        self.padding = padding
        self.max_actions = max_actions
        self.noop_penalty = noop_penalty
        self.full_info = full_info
        self.action_space = gym.spaces.Discrete(n)
        size = n * SLOT_SIZE + GLOBAL_SIZE
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)
        self.knowledge = Knowledge()
        self.candidates: list[Candidate] = []
        self._actions = 0
        self._ended: tuple[bool, bool] | None = None
        self._info: dict[str, Any] = {}

    # --- gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the env and the knowledge; the first customer message is read."""
        observation, info = self.env.reset(seed=seed, options=options)
        self.knowledge = Knowledge()
        self.knowledge.observe(observation)
        self._actions = 0
        self._ended = None
        self._info = self._light(info)
        self.candidates = generate_candidates(self.knowledge)[: self.n]
        return self._features(), {**self._info, "num_candidates": len(self.candidates)}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Send the candidate behind index ``action`` (see ``padding``)."""
        index = int(np.asarray(action).reshape(-1)[0])
        if self._ended is not None:  # stepping past the end refused, as by the env
            raise ended(self._info.get("termination_reason") or "max_actions")
        self._actions += 1
        candidate = self.decode(index)
        terminated = truncated = False
        if candidate is None:
            reward = -self.noop_penalty
            info = {**self._info, "noop": True}
        else:
            inner: gym.Env[Any, Any] = self.env
            observation, raw, terminated, truncated, info = inner.step(
                candidate.to_action(f"call_{self._actions}")
            )
            reward = float(raw)
            self.knowledge.record(candidate, observation)
            self._info = self._light(info)
            info = {**self._info, "action": str(candidate)}
        if not (terminated or truncated) and self._actions >= self.max_actions:
            truncated = True
        if terminated or truncated:
            self._ended = (bool(terminated), bool(truncated))
        self.candidates = generate_candidates(self.knowledge)[: self.n]
        info["num_candidates"] = len(self.candidates)
        return self._features(), float(reward) + 0.0, bool(terminated), bool(truncated), info

    # --- helpers ----------------------------------------------------------------------------------
    def decode(self, index: int) -> Candidate | None:
        """The candidate that action ``index`` sends now (None: a no-op)."""
        count = len(self.candidates)
        if not 0 <= index < self.n or count == 0:
            return None
        if index < count:
            return self.candidates[index]
        return self.candidates[index % count] if self.padding == "cycle" else None

    def action_masks(self) -> np.ndarray:
        """The slots holding a distinct candidate (for sb3-contrib's ``MaskablePPO``)."""
        mask = np.zeros(self.n, dtype=bool)
        mask[: len(self.candidates)] = True
        return mask

    def _light(self, info: dict[str, Any]) -> dict[str, Any]:
        if self.full_info:
            return dict(info)
        return {key: info[key] for key in INFO_KEYS if key in info}

    def _features(self) -> np.ndarray:
        unwrapped = self.env.unwrapped
        episode = getattr(unwrapped, "episode", None)
        progress = Progress(
            actions=self._actions,
            max_actions=self.max_actions,
            errors=episode.num_errors if episode is not None else 0,
            max_errors=getattr(unwrapped, "max_errors", 10),
            candidates=len(self.candidates),
            slots=self.n,
            ended=self._ended is not None,
        )
        return observation(self.candidates, self.knowledge, progress, self.padding == "cycle")
