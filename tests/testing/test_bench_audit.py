"""``python -m airline_gym.testing.bench_audit``: it plays every agent of the exploit audit on
every task, and says so in its figures."""

from __future__ import annotations

import pytest

from airline_gym.harness.exploit_audit import AGENTS
from airline_gym.testing.bench_audit import main, measure

pytestmark = pytest.mark.usefixtures("tau3_for_module")


def test_the_benchmark_plays_every_agent_on_every_task() -> None:
    figures = measure(4, 3)
    assert figures["tasks"] == 4 and figures["episodes"] == 4 * len(AGENTS)
    assert list(figures["per_agent_s"]) == list(AGENTS)  # type: ignore[call-overload]


def test_a_bad_size_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--n", "0"]) == 2
    assert "--n must be between 1 and 100000" in capsys.readouterr().err
