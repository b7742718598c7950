"""``airline-gym eval``'s progress on stderr: done/total, rate, ETA and the running pass rate.

On a terminal it is one tqdm bar (``eval: 37%|███   | 740/2000 [01:10<02:00, 10.5sim/s, pass
612/740 (83%)]``). Anywhere else (a pipe, a CI log) it is plain lines: one per simulation up to
:data:`EVERY_SIMULATION` simulations in the run, else one every :data:`LINE_EVERY_S` seconds and
a last one, each with the count, the running pass rate, the rate and the ETA (tqdm's formats).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from tqdm import tqdm

from airline_gym.harness.results import JSONObject, Results, is_success, sim_reward
from airline_gym.harness.results.metrics import judge_error_of
from airline_gym.printable import printable

__all__ = ["EVERY_SIMULATION", "LINE_EVERY_S", "ProgressDisplay"]

#: Runs of up to this many simulations get a plain line for each.
EVERY_SIMULATION = 100
#: Larger runs get a plain line this often (seconds), and one at the end.
LINE_EVERY_S = 10.0


class ProgressDisplay:
    """The eval's progress (see the module docstring)."""

    def __init__(self, stream: Any = None, clock: Any = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self._bar: Any = None  # a tqdm bar on a terminal
        self._seen = self._wins = 0  # running tally: updating costs the same at 10 or 10,000
        self._total = self._first = 0
        self._started = self._printed = 0.0

    def _status(self) -> str:
        seen, wins = self._seen, self._wins
        return f"pass {wins}/{seen} ({wins / seen:.0%})" if seen else "pass -"

    def start(self, done: int, total: int, results: Results) -> None:
        """Show the starting point (simulations already in a resumed file)."""
        self._seen = len(results.simulations)
        self._wins = sum(is_success(sim_reward(s)) for s in results.simulations)
        self._total, self._first = total, done
        self._started = self._printed = self.clock()
        if getattr(self.stream, "isatty", lambda: False)():
            self._bar = tqdm(
                total=total, initial=done, desc="eval", unit="sim", file=self.stream,
                dynamic_ncols=True, postfix=self._status(),
            )  # fmt: skip
        elif done:
            self._print(f"resuming: {done}/{total} simulations already done; {self._status()}")

    def update(self, sim: JSONObject, done: int, total: int, results: Results) -> None:
        """One more simulation finished."""
        self._seen += 1
        self._wins += is_success(sim_reward(sim))
        if self._bar is not None:
            self._bar.set_postfix_str(self._status(), refresh=False)
            self._bar.update(done - self._bar.n)
            return
        now = self.clock()
        if total <= EVERY_SIMULATION:
            reward = (
                "no verdict (the NL judge failed)"
                if judge_error_of(sim)
                else f"reward {sim_reward(sim):g}"
            )
            head = f"[{done}/{total}] task {printable(sim['task_id'])} trial {sim['trial']}: "
            ending = printable(sim["termination_reason"])
            self._print(f"{head}{reward} ({ending}); {self._status()}; {self._pace(done, now)}")
        elif done >= total or now - self._printed >= LINE_EVERY_S:
            self._print(f"[{done}/{total}] {self._status()}; {self._pace(done, now)}")
        else:
            return
        self._printed = now

    def _pace(self, done: int, now: float) -> str:
        """``N sim/s, ETA mm:ss`` from this run's simulations so far (tqdm's formats)."""
        elapsed = now - self._started
        ran = done - self._first
        if ran <= 0 or elapsed <= 0:
            return "rate -, ETA -"
        rate = ran / elapsed
        eta = tqdm.format_interval((self._total - done) / rate)
        shown = f"{rate:.2f} sim/s" if rate >= 1 else f"{1 / rate:.1f} s/sim"
        return f"{shown}, ETA {eta}"

    def close(self, failed: BaseException | None = None) -> None:
        """Take the bar down (after the run, or when it failed)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
