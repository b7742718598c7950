"""Which simulations failed on the run's machinery, and the early stop at ``max_failures``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from airline_gym.domain.grading import AGENT_ERROR, INFRASTRUCTURE_ERROR, USER_ERROR
from airline_gym.harness.results.metrics import judge_error_of

__all__ = ["RUN_FAILURE_ENDINGS", "FailureLimitReached", "describe_causes", "failure_cause"]

#: Endings that are a failure of the run's machinery (a model or server), not an agent's grade
#: (what ``retry_errors`` replays).
RUN_FAILURE_ENDINGS = frozenset({AGENT_ERROR, USER_ERROR, INFRASTRUCTURE_ERROR})
JUDGE_FAILED = "NL judge failed"


def failure_cause(sim: Mapping[str, Any]) -> str | None:
    """Why ``sim`` failed on the run's machinery (its ending, or a failed NL judge); ``None``
    when it was graded."""
    reason = sim.get("termination_reason")
    if reason in RUN_FAILURE_ENDINGS:
        return str(reason)
    return JUDGE_FAILED if judge_error_of(sim) is not None else None


def describe_causes(causes: Counter[str]) -> str:
    """``"agent_error 2, NL judge failed 1"``: the causes, most frequent first."""
    return ", ".join(f"{cause} {n}" for cause, n in causes.most_common())


class FailureLimitReached(Exception):
    """``max_failures`` simulations failed, so the run started no more: ``saved`` of ``total``
    simulations are in ``journal`` (``None`` without a results file), ``causes`` counts the
    failures."""

    def __init__(
        self, causes: Counter[str], limit: int, saved: int, total: int, journal: Path | None
    ) -> None:
        self.causes, self.limit = causes, limit
        self.saved, self.total, self.journal = saved, total, journal
        where = "" if journal is None else f" saved in {journal}"
        super().__init__(
            f"{causes.total()} simulations failed ({describe_causes(causes)}), reaching "
            f"max_failures={limit}: "
            f"no more were started; {saved} of {total}{where}"
        )
