"""The seed of each (task, trial) of a run, derived from the run's base seed."""

from __future__ import annotations

import hashlib
import random

__all__ = ["episode_seed"]


def episode_seed(seed: int, task_id: str, trial: int, protocol: str = "gym") -> int:
    """The seed of one (task, trial), derived deterministically from the run's ``seed``.

    ``leaderboard``: tau2's runner's, ``random.seed(seed)`` then one ``randint(0, 1000000)``
    per trial (the same for every task). ``gym``: one per (task, trial) from a hash.
    """
    if protocol == "leaderboard":
        rng = random.Random(seed)  # the same stream as the global random after random.seed()
        return [rng.randint(0, 1000000) for _ in range(trial + 1)][trial]
    digest = hashlib.sha256(f"{seed}:{task_id}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % (2**31 - 1)
