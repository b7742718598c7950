"""``airline-gym eval``'s progress display: a bar with the pass tally, or a line per simulation."""

from __future__ import annotations

from typing import Any

from airline_gym.harness.results import JSONObject, Results, is_success, sim_reward
from airline_gym.harness.results.metrics import judge_error_of
from airline_gym.printable import printable
from airline_gym.progress import Progress

__all__ = ["ProgressDisplay"]


class ProgressDisplay:
    """The eval's progress: a bar with the pass tally on a terminal, else a line per simulation."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self._bar: Progress | None = None
        self._seen = self._wins = 0  # running tally: updating costs the same at 10 or 10,000

    def _status(self) -> str:
        seen, wins = self._seen, self._wins
        return f"pass {wins}/{seen} ({wins / seen:.0%})" if seen else "pass -"

    def start(self, done: int, total: int, results: Results) -> None:
        """Show the starting point (simulations already in a resumed file)."""
        self._seen = len(results.simulations)
        self._wins = sum(is_success(sim_reward(s)) for s in results.simulations)
        self._bar = Progress("eval", self.stream, total=total).__enter__()
        status = self._status()
        line = f"resuming: {done}/{total} simulations already done; {status}" if done else None
        self._bar.count(done, status, line)

    def update(self, sim: JSONObject, done: int, total: int, results: Results) -> None:
        """One more simulation finished."""
        self._seen += 1
        self._wins += is_success(sim_reward(sim))
        status = self._status()
        reward = (
            "no verdict (the NL judge failed)"
            if judge_error_of(sim)
            else f"reward {sim_reward(sim):g}"
        )
        line = (
            f"[{done}/{total}] task {printable(sim['task_id'])} trial {sim['trial']}: "
            f"{reward} ({printable(sim['termination_reason'])}); {status}"
        )
        assert self._bar is not None, "start() first"
        self._bar.count(done, status, line)

    def close(self, failed: BaseException | None = None) -> None:
        """Take the bar down (after the run, or when it failed)."""
        if self._bar is not None:
            self._bar.__exit__(type(failed) if failed else None, failed, None)
            self._bar = None
