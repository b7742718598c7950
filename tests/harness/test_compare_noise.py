"""compare: what makes two runs incomparable, and B - A with its paired interval and verdict."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from airline_gym.cli.main import main
from airline_gym.harness.results import Results, compare
from airline_gym.harness.results.comparability import differences
from airline_gym.harness.results.compare import paired_difference

_HERE = Path(__file__).resolve()
_SHARED = next((p / "shared" for p in _HERE.parents if (p / "shared").is_dir()), _HERE)
TRAJECTORIES = _SHARED / "trajectories"
AIDE = TRAJECTORIES / "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json"
DISTYL = TRAJECTORIES / "t2old__lb-distyl-button__claude-opus-4-6__user-gpt-4.1.json"
TAU3_RUN = TRAJECTORIES / "t3new__sierra-pr448__whissle__user-gpt-4o.json"

# Five tasks, three trials in A, three in B (1 = reward 1).
A = {"0": [1, 1, 1], "1": [0, 0, 1], "2": [0, 0, 0], "3": [1, 0, 1], "4": [0, 1, 0]}
B = {"0": [0, 1, 1], "1": [1, 1, 0], "2": [0, 0, 0], "3": [1, 1, 1], "4": [1, 1, 0]}


def run_of(outcomes: dict[str, list[int]], **info: Any) -> dict[str, Any]:
    sims = [
        {"task_id": t, "trial": i, "reward_info": {"reward": float(r)}, "messages": []}
        for t, rewards in outcomes.items()
        for i, r in enumerate(rewards)
    ]
    tasks = [{"id": t, "user_scenario": {"instructions": f"task {t}"}} for t in outcomes]
    return {"info": info, "tasks": tasks, "simulations": sims}


def own_pass(rewards: list[int], k: int) -> float:
    subsets = list(itertools.combinations(rewards, k))
    return sum(all(s) for s in subsets) / len(subsets)


# --- the paired difference --------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3])
def test_paired_difference_matches_an_exact_paired_bootstrap(k):
    got = paired_difference(run_of(A), run_of(B))[k]
    values_a = np.array([own_pass(r, k) for r in A.values()])
    values_b = np.array([own_pass(r, k) for r in B.values()])
    diffs = values_b - values_a
    assert (got.k, got.tasks) == (k, 5)
    assert got.a == pytest.approx(values_a.mean()) and got.b == pytest.approx(values_b.mean())
    assert got.difference.estimate == pytest.approx(diffs.mean())
    # every equally likely paired draw of 5 tasks: the bootstrap's exact limit
    means = np.array([np.mean(d) for d in itertools.product(diffs, repeat=5)])
    low_band = np.quantile(means, [0.015, 0.035])
    high_band = np.quantile(means, [0.965, 0.985])
    assert low_band[0] - 1e-9 <= got.difference.low <= low_band[1] + 1e-9
    assert high_band[0] - 1e-9 <= got.difference.high <= high_band[1] + 1e-9


def test_verdicts_and_which_k_both_runs_have():
    better = run_of({str(t): [1] for t in range(12)})
    worse = run_of({str(t): [int(t % 4 == 0)] for t in range(12)})
    assert paired_difference(worse, better)[1].verdict == "B is better"
    assert paired_difference(better, worse)[1].verdict == "A is better"
    assert paired_difference(better, better)[1].verdict == "within noise"
    assert paired_difference(run_of(A), run_of(B))[1].verdict == "within noise"
    # A has 3 trials, B 1: only pass^1 is paired; no shared task: nothing
    assert list(paired_difference(run_of(A), run_of({t: r[:1] for t, r in B.items()}))) == [1]
    assert paired_difference(run_of({"x": [1]}), run_of({"y": [1]})) == {}
    # only the shared tasks count
    partial = paired_difference(run_of(A), run_of({"0": [0, 0, 0], "9": [1, 1, 1]}))[1]
    assert (partial.tasks, partial.a, partial.b) == (1, 1.0, 0.0)


# --- what makes runs incomparable -------------------------------------------------------------
def test_same_runs_have_no_difference_and_defaults_match_recorded_values():
    ours = run_of(A, protocol="leaderboard", airline_gym_version="1", benchmark="tau2")
    ours["info"]["user_info"] = {"implementation": "user_simulator", "llm": "gpt-4.1"}
    theirs = run_of(B)  # a tau2 run file: no benchmark, no protocol, no reward basis recorded
    theirs["info"]["user_info"] = {"implementation": "user_simulator", "llm": "gpt-4.1"}
    for task in theirs["tasks"]:  # tau2's model_dump adds defaults and nulls
        task.update(ticket=None, evaluation_criteria={"reward_basis": ["DB", "COMMUNICATE"]})
    for task in ours["tasks"]:
        task["evaluation_criteria"] = {}
    assert differences(ours, theirs) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"benchmark": "tau3"}, "benchmark: A tau2, B tau3"),
        (
            {"reward_basis": ["NL_ASSERTION", "DB"]},
            "reward basis: A each task's own, B DB, NL_ASSERTION",
        ),
        ({"protocol": "leaderboard"}, "protocol: A gym, B leaderboard"),
        (
            {"user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"}},
            "customer: A scripted, B LLM gpt-4.1",
        ),
    ],
)
def test_each_info_difference_is_named(change, expected):
    base = {
        "airline_gym_version": "1",
        "protocol": "gym",
        "user_info": {"implementation": "scripted_user", "llm": None},
    }
    found = differences(run_of(A, **base), run_of(A, **{**base, **change}))
    assert [str(d) for d in found] == [expected]


def test_task_set_differences_ids_and_content():
    a, b = run_of(A), run_of({**B, "7": [1]})
    del b["simulations"][0:3]  # task 0 only in A now
    edited = copy.deepcopy(b)
    edited["tasks"][1]["user_scenario"]["instructions"] = "another story"  # task 1
    found = [str(d) for d in differences(a, edited)]
    assert found == [
        "task set: 1 task(s) only in A (0); 4 task(s) in both",
        "task set: 1 task(s) only in B (7); 4 task(s) in both",
        "task set: 1 of the 4 shared task(s) differ in content (1): not the same tasks "
        "(e.g. tau2 vs tau3)",
    ]
    customer = run_of(A, user_info={"implementation": "user_simulator", "llm": "gpt-4o"})
    other = run_of(A, user_info={"implementation": "user_simulator", "llm": "gpt-4.1"})
    assert [str(d) for d in differences(customer, other)] == [
        "customer: A LLM gpt-4o, B LLM gpt-4.1"
    ]


# --- the command ------------------------------------------------------------------------------
def write(path: Path, data: dict[str, Any]) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def test_cli_refuses_incomparable_runs_one_line_each(tmp_path, capsys):
    a = write(tmp_path / "a.json", run_of(A, protocol="gym", airline_gym_version="1"))
    b_data = run_of({**B, "8": [1, 1, 1]}, protocol="leaderboard", benchmark="tau3")
    b = write(tmp_path / "b.json", b_data)
    assert main(["compare", a, b]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 3, captured.err
    assert all(line.startswith("airline-gym compare: error: cannot compare") for line in lines)
    assert "task set: 1 task(s) only in B (8)" in lines[0]
    assert "benchmark: A tau2, B tau3" in lines[1] and "protocol: A gym, B leaderboard" in lines[2]
    assert all("--allow-different" in line for line in lines)
    # asked for: the differences come first as notes, then the comparison and the verdict
    assert main(["compare", a, b, "--allow-different"]) == 0
    out = capsys.readouterr().out
    assert "note: the runs differ in benchmark: A tau2, B tau3" in out
    assert "B - A over the 5 task(s) in both" in out and "verdict (pass^1): within noise" in out
    assert main(["compare", a, b, "--allow-different", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["what"] for d in data["differences"]] == ["task set", "benchmark", "protocol"]
    assert list(data["paired"]) == ["1", "2", "3"] and data["verdict"] == "within noise"
    assert data["paired"]["1"]["difference"]["estimate"] == pytest.approx(
        np.mean([own_pass(B[t], 1) - own_pass(A[t], 1) for t in A])
    )


def test_cli_verdict_on_comparable_runs(tmp_path, capsys):
    worse = write(tmp_path / "w.json", run_of({str(t): [int(t % 3 == 0)] for t in range(12)}))
    better = write(tmp_path / "b.json", run_of({str(t): [1] for t in range(12)}))
    assert main(["compare", worse, better]) == 0
    out = capsys.readouterr().out
    assert "note:" not in out
    assert "  pass^1: A 0.333  B 1.000  B - A +0.667 [" in out
    assert out.rstrip().endswith("verdict (pass^1): B is better")
    assert main(["compare", better, worse]) == 0
    assert capsys.readouterr().out.rstrip().endswith("verdict (pass^1): A is better")


@pytest.mark.skipif(not AIDE.is_file(), reason="../shared/trajectories is absent")
def test_real_leaderboard_runs(capsys):
    # two tau2 run files on the same 50 tau2 tasks with the same gpt-4.1 customer: comparable
    assert differences(Results.load(AIDE), Results.load(DISTYL)) == []
    result = compare(Results.load(AIDE), Results.load(DISTYL))
    assert (result.paired[1].a, result.paired[1].b) == (36 / 50, 38 / 50)
    assert result.verdict == "within noise"
    # the README's figures
    interval = result.paired[1].difference
    assert (interval.low, interval.high) == pytest.approx((-0.06, 0.12))
    gpt54 = TRAJECTORIES / "t2old__lb-ironshell__llm_agent-gpt-5.4__user-gpt-4.1.json"
    better = paired_difference(Results.load(gpt54), Results.load(AIDE))[1]
    assert better.verdict == "B is better"
    assert (better.difference.low, better.difference.high) == pytest.approx((0.06, 0.28))
    # tau2 tasks against tau3 tasks, gpt-4.1 customer against gpt-4o: refused, both said
    assert main(["compare", str(AIDE), str(TAU3_RUN)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert "task set: 29 of the 50 shared task(s) differ in content" in err[0]
    assert "customer: A LLM gpt-4.1, B LLM gpt-4o" in err[1]


@pytest.mark.skipif(not AIDE.is_file(), reason="../shared/trajectories is absent")
def test_our_results_and_a_tau2_run_file_have_the_same_task_set():
    from airline_gym.harness.evaluate import EvalConfig, evaluate

    ours = evaluate("noop", EvalConfig())  # all 50 tau2 tasks, scripted customer, gym
    found = [str(d) for d in differences(ours, Results.load(AIDE))]
    # tau2 run writes its task records with defaults and nulls ours lack: the same tasks
    assert found == [
        "customer: A scripted, B LLM gpt-4.1",
        "protocol: A gym, B leaderboard",
    ]
    assert next(d.what for d in differences(ours, Results.load(TAU3_RUN))) == "task set"
