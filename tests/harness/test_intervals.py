"""pass^k intervals, per-task tallies and disagreeing trials, checked against independent sums.

The independent computations: pass^k as the share of k-subsets of a task's trials that all
succeeded (itertools), and the bootstrap's limit as the exact distribution of the resampled mean
over every possible draw of tasks (itertools.product, numpy for the quantiles).
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import numpy as np
import pytest

from airline_gym.harness.results import (
    Results,
    disagreeing_tasks,
    format_summary,
    pass_hat_k,
    pass_hat_k_intervals,
    summarize,
    task_successes,
)
from airline_gym.harness.results.compare import paired_difference
from airline_gym.harness.results.intervals import (
    Bootstrap,
    Interval,
    bootstrap_interval,
    verdict,
)

# Six tasks, three trials each (1 = reward 1): a small hand case.
HAND = {
    "0": [1, 1, 1],
    "1": [1, 0, 1],
    "2": [0, 0, 0],
    "3": [0, 1, 0],
    "4": [1, 1, 1],
    "10": [1, 1, 0],
}


def run_of(outcomes: dict[str, list[int]], num_trials: int | None = None) -> dict[str, Any]:
    sims = [
        {"task_id": t, "trial": i, "reward_info": {"reward": float(r)}, "messages": []}
        for t, rewards in outcomes.items()
        for i, r in enumerate(rewards)
    ]
    return {"info": {"num_trials": num_trials} if num_trials else {}, "simulations": sims}


def subset_pass(rewards: list[int], k: int) -> float:
    """pass^k of one task by enumeration: the share of k-subsets of trials that all succeed."""
    subsets = list(itertools.combinations(rewards, k))
    return sum(all(s) for s in subsets) / len(subsets)


def exact_bootstrap_quantiles(values: list[float], q: list[float]) -> np.ndarray:
    """The quantiles of the mean over every equally likely draw of len(values) tasks."""
    means = [np.mean(draw) for draw in itertools.product(values, repeat=len(values))]
    return np.quantile(np.array(means), q)


def test_tallies_and_disagreeing_tasks_by_hand():
    run = run_of(HAND)
    assert task_successes(run) == {
        "0": (3, 3),
        "1": (2, 3),
        "2": (0, 3),
        "3": (1, 3),
        "4": (3, 3),
        "10": (2, 3),
    }
    assert disagreeing_tasks(run) == ["1", "3", "10"]  # numeric order, not file order
    assert disagreeing_tasks(run_of({"a": [1], "b": [0]})) == []


@pytest.mark.parametrize("k", [1, 2, 3])
def test_interval_matches_the_exact_bootstrap(k):
    run = run_of(HAND, num_trials=3)
    got = pass_hat_k_intervals(run)[k]
    values = [subset_pass(rewards, k) for rewards in HAND.values()]
    # the estimate: the mean of the tasks' own pass^k, equal to pass_hat_k's figure
    assert got.estimate == pytest.approx(np.mean(values)) == pytest.approx(pass_hat_k(run)[k])
    # the ends: between the exact distribution's 1.5% and 3.5% (97.5% within 96.5-98.5%);
    # 2,000 resamples place a 2.5% quantile that close nearly always, and the seed is fixed
    lows = exact_bootstrap_quantiles(values, [0.015, 0.035])
    highs = exact_bootstrap_quantiles(values, [0.965, 0.985])
    assert lows[0] - 1e-9 <= got.low <= lows[1] + 1e-9, (got, lows)
    assert highs[0] - 1e-9 <= got.high <= highs[1] + 1e-9, (got, highs)
    assert got.low < got.estimate < got.high


def test_interval_is_deterministic_whatever_the_order_of_simulations():
    run = run_of(HAND, num_trials=3)
    shuffled = dict(run, simulations=random.Random(5).sample(run["simulations"], 18))
    assert pass_hat_k_intervals(run) == pass_hat_k_intervals(shuffled)
    assert pass_hat_k_intervals(Results.from_data(run)) == pass_hat_k_intervals(run)
    values = [0.0, 1.0, 1.0]
    assert bootstrap_interval(values, seed=1) == bootstrap_interval(values, seed=1)


def test_interval_edge_cases():
    assert pass_hat_k_intervals(run_of({})) == {}
    # every task agrees: no spread at all
    assert pass_hat_k_intervals(run_of({"a": [1, 1], "b": [1, 1]}))[2] == Interval(1.0, 1.0, 1.0)
    # a wider level gives a wider interval
    values = [subset_pass(r, 1) for r in HAND.values()]
    narrow, wide = bootstrap_interval(values, level=0.5), bootstrap_interval(values, level=0.99)
    assert wide.low <= narrow.low < narrow.high <= wide.high
    with pytest.raises(ValueError, match="no values"):
        bootstrap_interval([])


def test_verdict_reads_the_interval_of_b_minus_a():
    assert verdict(Interval(0.2, 0.01, 0.4)) == "B is better"
    assert verdict(Interval(-0.2, -0.4, -0.01)) == "A is better"
    assert verdict(Interval(0.1, -0.05, 0.3)) == "within noise"
    assert verdict(Interval(0.0, 0.0, 0.0)) == "within noise"


def test_summary_gives_intervals_tallies_and_disagreement():
    run = run_of(HAND, num_trials=3)
    summary = summarize(run)
    intervals = pass_hat_k_intervals(run)
    assert summary["pass_hat_k_interval"] == {
        k: {"low": v.low, "high": v.high} for k, v in intervals.items()
    }
    assert summary["task_successes"]["1"] == {"successes": 2, "trials": 3}
    assert summary["disagreeing_tasks"] == ["1", "3", "10"]
    assert summary["user_cache"] is None
    text = format_summary(summary)
    one = intervals[1]
    assert f"k=1: [{one.low:.3f}, {one.high:.3f}]" in text
    assert "successes per task: 0:3/3 1:2/3 2:0/3 3:1/3 4:3/3 10:2/3" in text
    assert "trials disagree on 3 task(s): 1 3 10" in text
    json.dumps(summary)  # the --json output is plain JSON
    # one trial per task: nothing can disagree, so the line is left out
    assert "disagree" not in format_summary(summarize(run_of({"a": [1], "b": [0]})))
    cached = summarize({**run, "info": {"user_cache": {"hits": 7, "misses": 2}}})
    assert "user cache: 7 hits, 2 misses" in format_summary(cached)


def test_eval_json_and_text_carry_the_noise_figures(tmp_path, capsys):
    from airline_gym.cli.main import main

    out = tmp_path / "noop.json"
    args = ["eval", "--agent", "noop", "--task-ids", "0,2", "--trials", "2", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["task_successes"] == {
        "0": {"successes": 2, "trials": 2},  # a do-nothing agent passes task 0, not task 2
        "2": {"successes": 0, "trials": 2},
    }
    assert printed["disagreeing_tasks"] == []
    assert printed["pass_hat_k_interval"] == {
        "1": {"low": 0.0, "high": 1.0},
        "2": {"low": 0.0, "high": 1.0},
    }
    assert printed["user_cache"] is None
    assert main(["eval", "--agent", "noop", "--task-ids", "0,2", "--out", str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    assert "95% interval (bootstrap over tasks): k=1: [0.000, 1.000]" in text
    assert "successes per task: 0:1/1 2:0/1" in text


@pytest.mark.parametrize(
    "settings", [Bootstrap(), Bootstrap(resamples=300, seed=7, level=0.5)], ids=["default", "set"]
)
def test_pass_hat_k_and_compare_draw_their_intervals_with_one_bootstrap(
    settings: Bootstrap,
) -> None:
    """B - A against a run that never succeeds is B's own per-task pass^k: the same interval,
    under the same settings (one bootstrap setting for both figures)."""
    outcomes = {str(t): [t % 2, t % 3 != 0, 1] for t in range(12)}
    run = run_of({t: [int(r) for r in rs] for t, rs in outcomes.items()})
    never = run_of({t: [0, 0, 0] for t in outcomes})
    own = pass_hat_k_intervals(run, bootstrap=settings)
    paired = paired_difference(never, run, bootstrap=settings)
    assert {k: p.difference for k, p in paired.items()} == own
    assert (own == pass_hat_k_intervals(run)) == (settings == Bootstrap())  # the settings count
