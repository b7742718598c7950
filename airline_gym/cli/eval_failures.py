"""Whether an ``eval`` run failed: its failed simulations against ``--max-failures``."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airline_gym.domain.grading import AGENT_ERROR, INFRASTRUCTURE_ERROR, USER_ERROR
from airline_gym.harness.results.metrics import judge_error_of

__all__ = ["FAILED_ENDINGS", "failed_run_line", "positive_count"]

#: Endings that are a failure of the run's machinery (a model or server), not an agent's grade.
FAILED_ENDINGS = (AGENT_ERROR, USER_ERROR, INFRASTRUCTURE_ERROR)


def positive_count(text: str) -> int:
    """A ``--max-failures`` value: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def failed_run_line(sims: Sequence[Any], max_failures: int | None, out: Path) -> str | None:
    """The one line saying the run failed when its failed simulations (agent_error,
    user_error, infrastructure_error, or a failed NL judge) reach ``max_failures`` (``None``:
    all of them, and at least one); ``None`` when the run did not fail."""
    causes: Counter[str] = Counter()
    for sim in sims:
        reason = sim.get("termination_reason")
        if reason in FAILED_ENDINGS:
            causes[str(reason)] += 1
        elif judge_error_of(sim) is not None:
            causes["NL judge failed"] += 1
    failed = sum(causes.values())
    limit = len(sims) if max_failures is None else max_failures
    if not sims or failed < limit:
        return None
    why = ", ".join(f"{cause} {n}" for cause, n in causes.most_common())
    rule = "every simulation" if max_failures is None else f"--max-failures {max_failures}"
    return (
        f"the run failed: {failed} of {len(sims)} simulations failed ({why}), reaching "
        f"{rule}; the results are saved in {out}"
    )
