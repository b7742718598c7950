"""Two runs compared task by task: which tasks improved or regressed, and each run's pass^k."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airline_gym.harness.results.io import JSONObject
from airline_gym.harness.results.metrics import (
    is_success,
    mean,
    pass_hat_k,
    task_outcomes,
    task_sort_key,
)

__all__ = ["Comparison", "TaskComparison", "compare"]


@dataclass(frozen=True)
class TaskComparison:
    """One task in two runs: (successes, simulations) in each, ``None`` where absent."""

    task_id: str
    a: tuple[int, int] | None
    b: tuple[int, int] | None

    @property
    def rate_a(self) -> float | None:
        """Success rate in run A."""
        return None if self.a is None else self.a[0] / self.a[1]

    @property
    def rate_b(self) -> float | None:
        """Success rate in run B."""
        return None if self.b is None else self.b[0] / self.b[1]

    @property
    def change(self) -> str:
        """``improved``, ``regressed``, ``same``, ``only in A`` or ``only in B``."""
        if self.rate_a is None:
            return "only in B"
        if self.rate_b is None:
            return "only in A"
        if self.rate_b > self.rate_a:
            return "improved"
        return "regressed" if self.rate_b < self.rate_a else "same"


@dataclass(frozen=True)
class Comparison:
    """Two runs task by task, with each run's pass^k and mean reward."""

    tasks: tuple[TaskComparison, ...]
    pass_hat_k_a: dict[int, float]
    pass_hat_k_b: dict[int, float]
    mean_reward_a: float | None
    mean_reward_b: float | None

    def ids(self, change: str) -> list[str]:
        """Ids of the tasks whose :attr:`TaskComparison.change` is ``change``."""
        return [t.task_id for t in self.tasks if t.change == change]

    @property
    def improved(self) -> list[str]:
        """Tasks whose success rate went up from A to B (a flip, with one trial)."""
        return self.ids("improved")

    @property
    def regressed(self) -> list[str]:
        """Tasks whose success rate went down from A to B."""
        return self.ids("regressed")

    def to_dict(self) -> JSONObject:
        """JSON-ready data."""
        return {
            "pass_hat_k_a": self.pass_hat_k_a,
            "pass_hat_k_b": self.pass_hat_k_b,
            "mean_reward_a": self.mean_reward_a,
            "mean_reward_b": self.mean_reward_b,
            "improved": self.improved,
            "regressed": self.regressed,
            "tasks": [
                {
                    "task_id": t.task_id,
                    "a": None if t.a is None else {"successes": t.a[0], "trials": t.a[1]},
                    "b": None if t.b is None else {"successes": t.b[0], "trials": t.b[1]},
                    "change": t.change,
                }
                for t in self.tasks
            ],
        }


def compare(a: Any, b: Any) -> Comparison:
    """Compare two runs (:class:`Results`, their dicts, or lists of simulations) task by task."""
    outcomes_a, outcomes_b = task_outcomes(a), task_outcomes(b)

    def tally(rewards: list[float] | None) -> tuple[int, int] | None:
        return None if rewards is None else (sum(map(is_success, rewards)), len(rewards))

    ids = sorted(set(outcomes_a) | set(outcomes_b), key=task_sort_key)
    rewards_a = [r for rs in outcomes_a.values() for r in rs]
    rewards_b = [r for rs in outcomes_b.values() for r in rs]
    return Comparison(
        tasks=tuple(
            TaskComparison(t, tally(outcomes_a.get(t)), tally(outcomes_b.get(t))) for t in ids
        ),
        pass_hat_k_a=pass_hat_k(a),
        pass_hat_k_b=pass_hat_k(b),
        mean_reward_a=mean(rewards_a),
        mean_reward_b=mean(rewards_b),
    )
