"""tau3's failure policy: play a failed simulation again from the start, then give it up.

Under the ``tau3`` benchmark with the ``leaderboard`` protocol (spec §13.12c), a simulation that
fails, i.e. ends in ``agent_error`` or ``user_error`` (the agent's or the customer's model still
failing after its per-request retries, or an exception in either) or raises, is played again
from the start with the same seed, up to ``retries`` more times, ``delay`` seconds apart, as
tau3's runner does. If every attempt fails it is recorded as ``infrastructure_error``: no
reward, no messages, the last cause and the number of attempts in its ``info``; pass^k and the
mean leave it out unless failures are counted as 0 (:mod:`airline_gym.harness.results.metrics`).
Under ``tau2`` a failure is recorded as it ended (``agent_error``/``user_error``, reward 0).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from airline_gym.domain.benchmarks import TAU3
from airline_gym.domain.grading import AGENT_ERROR, INFRASTRUCTURE_ERROR, USER_ERROR
from airline_gym.errors import ConfigError
from airline_gym.harness.results import now
from airline_gym.harness.runner import EpisodeResult, run_sync

__all__ = [
    "FAILED_ENDINGS",
    "TAU3_REQUEST_RETRIES",
    "RetryPolicy",
    "failure_policy",
    "retries_per_request",
]

log = logging.getLogger(__name__)

#: Endings that mean the simulation failed rather than ran its course.
FAILED_ENDINGS = frozenset({AGENT_ERROR, USER_ERROR})

#: tau3's retries of one LLM request (its ``num_retries`` default), under its failure policy.
TAU3_REQUEST_RETRIES = 3


@dataclass(frozen=True)
class RetryPolicy:
    """``retries`` re-runs of a failed simulation, ``delay`` seconds apart (tau3: 3 and 1 s);
    ``keeps_failures``: tau2's policy instead (the one attempt's result, whatever it is)."""

    retries: int = 3
    delay: float = 1.0
    keeps_failures: bool = False

    def __post_init__(self) -> None:
        retries = self.retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ConfigError(f"simulation retries must be a whole number >= 0: {retries!r}")

    def play(
        self, attempt: Callable[[], EpisodeResult], task_id: str, seed: int | None
    ) -> EpisodeResult:
        """Run ``attempt`` until it does not fail, at most ``retries + 1`` times."""

        async def once() -> EpisodeResult:
            return attempt()

        async def pause(seconds: float) -> None:
            time.sleep(seconds)

        return run_sync(self._attempts(once, pause, task_id, seed))

    async def aplay(
        self, attempt: Callable[[], Awaitable[EpisodeResult]], task_id: str, seed: int | None
    ) -> EpisodeResult:
        """Async :meth:`play` (the wait between attempts does not block the loop)."""
        return await self._attempts(attempt, asyncio.sleep, task_id, seed)

    async def _attempts(
        self,
        attempt: Callable[[], Awaitable[EpisodeResult]],
        pause: Callable[[float], Awaitable[None]],
        task_id: str,
        seed: int | None,
    ) -> EpisodeResult:
        if self.keeps_failures:
            return await attempt()
        started, clock = now(), time.perf_counter()
        cause = ""
        for number in range(self.retries + 1):
            if number:
                await pause(self.delay)
            try:
                result = await attempt()
            except Exception as exc:
                cause = _raised(exc)
            else:
                if result.termination_reason not in FAILED_ENDINGS:
                    return result
                cause = _failed(result)
            self._log(task_id, seed, number, cause)
        return self._given_up(task_id, seed, started, clock, cause)

    def _log(self, task_id: str, seed: int | None, number: int, cause: str) -> None:
        tries = self.retries + 1
        more = "retrying" if number + 1 < tries else "giving up"
        log.warning(
            "task %s (seed %s) failed, attempt %d/%d (%s): %s",
            task_id,
            seed,
            number + 1,
            tries,
            more,
            cause,
        )

    def _given_up(
        self, task_id: str, seed: int | None, started: str, clock: float, cause: str
    ) -> EpisodeResult:
        return EpisodeResult(
            task_id=task_id,
            seed=seed,
            reward=0.0,
            termination_reason=INFRASTRUCTURE_ERROR,
            steps=0,
            num_errors=0,
            messages=[],
            tools=[],
            reward_info={"failed_after_attempts": self.retries + 1},
            duration=time.perf_counter() - clock,
            error=cause,
            start_time=started,
            end_time=now(),
        )


def failure_policy(config: Any) -> RetryPolicy:
    """The policy of a run (an ``EvalConfig``): tau3's with the leaderboard protocol, else tau2's
    (keep failures as they ended)."""
    tau3_run = _tau3_policy(config.benchmark, config.protocol)
    retries, delay = config.simulation_retries, config.retry_delay
    return RetryPolicy(retries, delay, keeps_failures=not tau3_run)


def retries_per_request(benchmark: str, protocol: str, max_retries: int) -> int:
    """Retries per LLM request for ``--max-retries``: itself, except where tau3 spends it on
    whole simulations (its requests then keep tau3's fixed 3)."""
    return TAU3_REQUEST_RETRIES if _tau3_policy(benchmark, protocol) else int(max_retries)


def _tau3_policy(benchmark: str, protocol: str) -> bool:
    return benchmark == TAU3 and protocol == "leaderboard"


def _failed(result: EpisodeResult) -> str:
    return f"{result.termination_reason}: {result.error or 'no cause recorded'}"


def _raised(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:500]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
