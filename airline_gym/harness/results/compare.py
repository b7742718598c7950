"""Two runs compared: what differs besides the agent, task by task, and B - A with its interval.

:func:`compare` gives each task's tally in both runs, each run's pass^k, the differences that
make two runs incomparable (:mod:`.comparability`), and :func:`paired_difference`: B - A in
pass^k over the tasks both ran, with a 95% paired bootstrap interval over those tasks and a
plain verdict ("B is better", "A is better", "within noise").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airline_gym.harness.results.comparability import Difference, differences
from airline_gym.harness.results.intervals import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    Interval,
    task_pass_hat_k,
    verdict,
)
from airline_gym.harness.results.io import JSONObject
from airline_gym.harness.results.metrics import (
    is_success,
    mean,
    pass_hat_k,
    task_outcomes,
    task_sort_key,
    task_successes,
)

__all__ = [
    "MIN_TASKS",
    "Comparison",
    "PairedDifference",
    "TaskComparison",
    "compare",
    "paired_difference",
]


@dataclass(frozen=True)
class PairedDifference:
    """pass^k of A and of B over the tasks both ran, and B - A with its paired interval."""

    k: int
    tasks: int
    a: float
    b: float
    difference: Interval

    @property
    def verdict(self) -> str:
        """``B is better``, ``A is better`` or ``within noise``."""
        return verdict(self.difference)

    def to_dict(self) -> JSONObject:
        """JSON-ready data."""
        return {
            "k": self.k,
            "tasks": self.tasks,
            "a": self.a,
            "b": self.b,
            "difference": self.difference.to_dict(),
            "verdict": self.verdict,
        }


def paired_difference(
    a: Any,
    b: Any,
    *,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> dict[int, PairedDifference]:
    """B - A in pass^k over the tasks both runs have, for every k both can give.

    k runs from 1 to the fewest simulations of any shared task in either run (and no further
    than each run's own pass^k goes). The interval is a percentile bootstrap of the per-task
    differences over the shared tasks (``bootstrap``'s settings; seeded: the same files give the
    same interval); a task hard for both runs then counts once, which makes it much narrower
    than two separate intervals. No shared task: an empty dict.

    >>> run = lambda rewards: [{"task_id": t, "reward_info": {"reward": r}}
    ...                        for t, r in enumerate(rewards)]
    >>> paired_difference(run([0, 0, 1, 0]), run([1, 1, 1, 1]))[1].verdict
    'B is better'
    """
    tallies_a, tallies_b = task_successes(a), task_successes(b)
    shared = [t for t in tallies_a if t in tallies_b]
    if not shared:
        return {}
    limits = [len(pass_hat_k(a)), len(pass_hat_k(b))]
    limits += [tallies_a[t][1] for t in shared] + [tallies_b[t][1] for t in shared]
    out = {}
    for k in range(1, min(limits) + 1):
        values_a = [task_pass_hat_k(*tallies_a[t], k) for t in shared]
        values_b = [task_pass_hat_k(*tallies_b[t], k) for t in shared]
        diffs = [vb - va for va, vb in zip(values_a, values_b, strict=True)]
        interval = bootstrap.interval(diffs)
        out[k] = PairedDifference(
            k, len(shared), mean(values_a) or 0.0, mean(values_b) or 0.0, interval
        )
    return out


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


#: Fewer shared tasks than this and the verdict comes with a warning. Measured by simulation
#: (tasks whose outcome flips either way with probability 0.4 each, no true difference): the
#: percentile bootstrap's 95% interval excluded 0, a false "better", in 34% of comparisons of
#: 2 tasks, 13-14% of 3 and 5, 7% of 8, and 4-6% from 10 tasks on (5% is what it promises).
MIN_TASKS = 10


@dataclass(frozen=True)
class Comparison:
    """Two runs task by task, with each run's pass^k and mean reward."""

    tasks: tuple[TaskComparison, ...]
    pass_hat_k_a: dict[int, float]
    pass_hat_k_b: dict[int, float]
    mean_reward_a: float | None
    mean_reward_b: float | None
    differences: tuple[Difference, ...] = ()
    paired: dict[int, PairedDifference] = field(default_factory=dict)

    @property
    def verdict(self) -> str | None:
        """The verdict on pass^1 over the shared tasks (``None`` when they share none)."""
        first = self.paired.get(1)
        return None if first is None else first.verdict

    @property
    def warning(self) -> str | None:
        """Why the verdict is not to be trusted: too few shared tasks (``None`` when enough)."""
        first = self.paired.get(1)
        if first is None or first.tasks >= MIN_TASKS:
            return None
        return (
            f"only {first.tasks} task(s) in both runs: with fewer than {MIN_TASKS} the 95% "
            "interval means little (two runs with no true difference read as 'better' up to "
            "a third of the time), so the verdict is no evidence either way"
        )

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
            "differences": [{"what": d.what, "text": d.text} for d in self.differences],
            "paired": {k: p.to_dict() for k, p in self.paired.items()},
            "verdict": self.verdict,
            "warning": self.warning,
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
    """Compare two runs (:class:`Results`, their dicts, or lists of simulations).

    Nothing is refused here: :attr:`Comparison.differences` says what differs besides the agent
    (the CLI refuses unless ``--allow-different``).
    """
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
        differences=tuple(differences(a, b)),
        paired=paired_difference(a, b),
    )
