"""``bench --e2e`` measures what it says: it runs, its figures are well-formed, rewards are right.

Nothing here is timed; the figures themselves are checked for shape and consistency only.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from optional_libs import missing

from airline_gym.domain.tasks import load_task_set
from airline_gym.testing import bench_e2e
from airline_gym.testing.bench_e2e import TASK_IDS, Figures


def expected_requests(trials: int) -> int:
    """Per simulation: the customer's first message, one call per gold action, the agent's
    confirmation, the customer's stop."""
    tasks = load_task_set()
    return trials * sum(len(tasks[t].actions) + 3 for t in TASK_IDS)


def well_formed(figures: Figures, sims: int, trials: int) -> None:
    assert figures.sims == sims and figures.requests == expected_requests(trials)
    for value in (figures.wall, figures.first_to_last, figures.to_first_request):
        assert math.isfinite(value) and value > 0
    assert figures.first_to_last < figures.wall and figures.to_first_request < figures.wall
    assert figures.cpu_per_request is not None and 0 < figures.cpu_per_request < figures.wall
    steady = figures.cpu_per_request_steady
    assert steady is not None and 0 < steady < figures.wall
    assert figures.cpu_to_first_request is not None and figures.cpu_to_first_request > 0
    assert figures.peak_rss_mib > 10
    assert figures.sims_per_min > 0 and figures.sims_per_min_requests > figures.sims_per_min


def test_ours_runs_and_scores_every_gold_script(tmp_path: Path) -> None:
    figures = bench_e2e.run_ours(tmp_path, trials=1, concurrency=4)
    well_formed(figures, sims=len(TASK_IDS), trials=1)
    # the gold script through the LLM path scores as the gold agent does in process
    from airline_gym.agents import GoldAgent
    from airline_gym.env import AirlineEnv
    from airline_gym.harness.runner import run_episode

    sequential = [run_episode(AirlineEnv(user="scripted"), GoldAgent(), t, 0) for t in TASK_IDS]
    assert figures.rewards == sorted(r.reward for r in sequential) == [1.0] * len(TASK_IDS)


def test_in_flight_rewards_equal_the_sequential_run() -> None:
    flight = bench_e2e.run_in_flight(episodes=60, latency=0.05)
    assert flight.episodes == 60 and flight.rewards_match and flight.isolated
    assert flight.requests == expected_requests(1) * 6
    assert flight.timed_requests == flight.requests  # every request's ready -> sent was timed
    assert 0 < flight.ready_to_sent_p50 <= flight.ready_to_sent_p99 <= flight.ready_to_sent_max
    assert flight.ready_to_sent_max < flight.wall
    assert 0 <= flight.turnaround_p50 <= flight.turnaround_p99 < flight.wall
    assert 0 <= flight.loop_lag_p99 <= flight.loop_lag_max < flight.wall
    report = bench_e2e.format_report(
        Figures("x", 1, 1.0, 2, 0.5, 0.1, 0.1, 0.001, 50.0, [1.0]), None, flight
    )
    assert "60 episodes in flight" in report and "ready request -> sent" in report


@pytest.mark.reference
@pytest.mark.slow
def test_reference_runs_the_same_work(tmp_path: Path) -> None:
    """``tau2 run`` on the same server makes the same requests and scores the same."""
    if bench_e2e.reference_command() is None:
        missing("tau2 is not installed")
    ours = bench_e2e.run_ours(tmp_path, trials=1)
    ref = bench_e2e.run_reference(tmp_path, trials=1)
    well_formed(ref, sims=len(TASK_IDS), trials=1)
    assert ref.rewards == ours.rewards
