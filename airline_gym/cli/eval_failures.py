"""Whether an ``eval`` run failed: its failed simulations against ``--max-failures``."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from airline_gym.harness.failures import FailureLimitReached, describe_causes, failure_cause

__all__ = ["failed_run_line", "positive_count", "stopped_early_line"]


def positive_count(text: str) -> int:
    """A ``--max-failures`` value: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def failed_run_line(sims: Iterable[Any], max_failures: int | None, out: Path) -> str | None:
    """The one line saying the run failed: when every simulation failed (agent_error,
    user_error, infrastructure_error, or a failed NL judge), whatever ``max_failures``, or when
    the failed ones reach ``max_failures``; ``None`` when the run did not fail."""
    causes: Counter[str] = Counter()
    count = 0
    for sim in sims:
        count += 1
        cause = failure_cause(sim)
        if cause is not None:
            causes[cause] += 1
    failed = causes.total()
    if not count or failed < min(count, max_failures or count):
        return None
    why = describe_causes(causes)
    if max_failures is not None and failed >= max_failures:
        rule = f"reaching --max-failures {max_failures}"
    else:  # nothing was graded: no limit makes that a finished run
        rule = "every simulation failed"
    return (
        f"the run failed: {failed} of {count} simulations failed ({why}), {rule}; "
        f"the results are saved in {out}"
    )


def stopped_early_line(stop: FailureLimitReached) -> str:
    """The one line printed when ``--max-failures`` stopped the run before its end."""
    done = f"{stop.saved} of {stop.total} simulations"
    failed = stop.causes.total()
    why = describe_causes(stop.causes)
    return (
        f"the run failed: {failed} simulation{'s' if failed != 1 else ''} failed ({why}), reaching "
        f"--max-failures {stop.limit}, so no more were started; {done} saved in {stop.journal}; "
        "fix the cause, then run the same command with --resume --retry-errors"
    )
