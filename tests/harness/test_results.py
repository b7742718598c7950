"""Results files (tau2 format), message conversion, pass^k, summaries and comparisons."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from optional_libs import import_optional

from airline_gym.domain.grading import grade
from airline_gym.harness.results import (
    RAW_ARGUMENTS,
    Results,
    compare,
    format_summary,
    is_success,
    pass_hat_k,
    plot_pass_hat_k,
    reward_info,
    summarize,
    tau2_messages,
)


def sim(task_id: str, trial: int, reward: float | None, **extra: Any) -> dict[str, Any]:
    info = None if reward is None else {"reward": reward}
    return {"task_id": task_id, "trial": trial, "reward_info": info, "messages": [], **extra}


def run_of(outcomes: dict[str, list[float]], num_trials: int | None = None) -> dict[str, Any]:
    sims = [sim(t, i, r) for t, rewards in outcomes.items() for i, r in enumerate(rewards)]
    info = {} if num_trials is None else {"num_trials": num_trials}
    return {"info": info, "tasks": [], "simulations": sims}


# --- pass^k --------------------------------------------------------------------------------
def test_pass_hat_k_matches_hand_computed_values():
    # task a: 3 of 4 trials succeed, task b: 1 of 4.
    run = run_of({"a": [1, 1, 0, 1], "b": [0, 0, 1, 0]}, num_trials=4)
    got = pass_hat_k(run)
    expected = {
        1: (3 / 4 + 1 / 4) / 2,  # 0.5
        2: (3 / 6 + 0 / 6) / 2,  # C(3,2)/C(4,2) = 3/6; C(1,2) = 0
        3: (1 / 4 + 0) / 2,  # C(3,3)/C(4,3) = 1/4
        4: 0.0,
    }
    assert got.keys() == expected.keys()
    for k, value in expected.items():
        assert got[k] == pytest.approx(value)
    # The same from a Results object and from a bare list of simulations.
    assert pass_hat_k(Results.from_data(run)) == got
    assert pass_hat_k(run["simulations"]) == got


def test_pass_hat_k_is_capped_like_tau2():
    # info says 4 trials but task b has only 2 simulations: k stops at 2 (tau2's min_k).
    run = run_of({"a": [1, 1, 1, 1], "b": [1, 0]}, num_trials=4)
    assert pass_hat_k(run) == pytest.approx({1: (1 + 0.5) / 2, 2: (1 + 0) / 2})
    # No info: the largest trial count, still capped by the smallest.
    assert list(pass_hat_k(run_of({"a": [1, 1, 1], "b": [1, 1, 1]}))) == [1, 2, 3]
    # info asks for fewer than there are: k stops at info.num_trials.
    assert list(pass_hat_k(run_of({"a": [1, 1, 1]}, num_trials=2))) == [1, 2]
    assert pass_hat_k(run_of({})) == {}


def test_success_is_reward_one_within_tau2_tolerance():
    assert is_success(1.0) and is_success(1 - 1e-7) and is_success(1)
    assert not is_success(0.999) and not is_success(None) and not is_success("1")
    run = {"simulations": [sim("a", 0, None), sim("a", 1, 1.0 - 1e-9)]}
    assert pass_hat_k(run) == {1: 0.5, 2: 0.0}


# --- compare --------------------------------------------------------------------------------
def test_compare_task_by_task():
    a = run_of({"1": [1], "2": [0], "3": [1], "10": [1]})
    b = run_of({"1": [1], "2": [1], "3": [0], "4": [1]})
    result = compare(a, b)
    assert [t.task_id for t in result.tasks] == ["1", "2", "3", "4", "10"]  # numeric order
    assert result.improved == ["2"] and result.regressed == ["3"]
    assert result.ids("only in A") == ["10"] and result.ids("only in B") == ["4"]
    assert result.pass_hat_k_a == {1: 0.75} and result.pass_hat_k_b == {1: 0.75}
    data = result.to_dict()
    assert data["tasks"][1] == {
        "task_id": "2",
        "a": {"successes": 0, "trials": 1},
        "b": {"successes": 1, "trials": 1},
        "change": "improved",
    }
    # Several trials: a change in the success rate counts.
    multi = compare(run_of({"1": [1, 1, 0]}), run_of({"1": [1, 0, 0]}))
    assert multi.regressed == ["1"] and multi.tasks[0].rate_b == pytest.approx(1 / 3)


# --- message conversion -----------------------------------------------------------------------
def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


LOOKUP = call("c1", "get_user_details", {"user_id": "mia_li_3668"})
EPISODE = [
    {"role": "assistant", "content": "Hi! How can I help you today?"},
    {"role": "user", "content": "Hello, I am mia_li_3668."},
    {"role": "assistant", "content": None, "tool_calls": [LOOKUP]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"user_id": "mia_li_3668"}'},
    {"role": "system", "content": "Error: invalid action: empty action"},
    {"role": "assistant", "content": None, "tool_calls": [call("c2", "x", "not json")]},
    {"role": "tool", "tool_call_id": "c2", "content": "Error: invalid arguments"},
    {
        "role": "assistant",
        "content": "Sure.",
        "tool_calls": [call("c3", "list_all_airports", {}), call("d1", "done", {})],
    },
    {"role": "tool", "tool_call_id": "c3", "content": "[]"},
    {"role": "tool", "tool_call_id": "d1", "content": "Conversation ended by the agent."},
]


def test_tau2_messages_convert_calls_results_errors_and_done():
    meta = [{"timestamp": f"t{i}", "cost": 0.5 if i == 2 else None} for i in range(len(EPISODE))]
    out = tau2_messages(EPISODE, meta)
    assert [m["role"] for m in out] == [
        "assistant", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool",
        "assistant",
    ]  # fmt: skip
    assert [m["turn_idx"] for m in out] == list(range(len(out)))
    assert out[2]["tool_calls"] == [
        {
            "id": "c1",
            "name": "get_user_details",
            "arguments": {"user_id": "mia_li_3668"},
            "requestor": "assistant",
        }
    ]
    assert (out[2]["timestamp"], out[2]["cost"]) == ("t2", 0.5)
    assert out[3] == {
        "id": "c1",
        "role": "tool",
        "content": '{"user_id": "mia_li_3668"}',
        "requestor": "assistant",
        "error": False,
        "turn_idx": 3,
        "timestamp": "t3",
    }
    assert out[4]["tool_calls"][0]["arguments"] == {RAW_ARGUMENTS: "not json"}
    assert out[5]["error"] is True
    # Text + a real call + done: the text and the call stay, done becomes ###STOP### afterwards.
    assert out[6]["content"] == "Sure." and [c["name"] for c in out[6]["tool_calls"]] == [
        "list_all_airports"
    ]
    assert out[7]["id"] == "c3"
    assert out[8]["content"] == "###STOP###" and out[8]["tool_calls"] is None
    assert "d1" not in json.dumps(out)
    assert out[1] == {
        "role": "user",
        "content": "Hello, I am mia_li_3668.",
        "tool_calls": None,
        "turn_idx": 1,
        "timestamp": "t1",
        "cost": None,
        "usage": None,
        "raw_data": None,
    }


def test_done_alone_or_with_text_is_one_stop_message():
    alone = [{"role": "assistant", "content": None, "tool_calls": [call("d", "done", {})]}]
    assert tau2_messages(alone)[0]["content"] == "###STOP###"
    with_text = [{"role": "assistant", "content": "Bye now", "tool_calls": [call("d", "done", {})]}]
    (message,) = tau2_messages(with_text)
    assert message["content"] == "Bye now\n###STOP###" and message["tool_calls"] is None


def test_reward_info_has_tau2_fields(tau2_tasks, base):
    task = tau2_tasks["3"]  # one communicate string
    said = [{"role": "assistant", "content": f"Noted: {task.communicate_info[0]}, OK"}]
    good = reward_info(grade(task, base.fork(), said, "user_stop"), task, said)
    assert good["reward"] == 1.0 and good["db_check"] == {"db_match": True, "db_reward": 1.0}
    assert good["communicate_checks"][0]["met"] is True
    assert "communicated in the message" in good["communicate_checks"][0]["justification"]
    assert good["reward_basis"] == ["DB", "COMMUNICATE"]
    assert good["reward_breakdown"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert {a["action"]["name"] for a in good["action_checks"]} == {a.name for a in task.actions}
    early = reward_info(grade(task, base.fork(), said, "agent_error"), task, said, "boom")
    assert early["reward"] == 0.0 and early["db_check"] is None
    assert early["info"] == {
        "note": "Simulation terminated prematurely. Termination reason: agent_error",
        "error": "boom",
    }
    no_comm = tau2_tasks["0"]
    plain = reward_info(grade(no_comm, base.fork(), [], "agent_stop"), no_comm)
    assert plain["communicate_checks"] is None
    assert plain["info"]["communicate"] == {"note": "No communicate_info to evaluate"}


# --- files ----------------------------------------------------------------------------------
def test_save_is_atomic_one_simulation_per_line_and_round_trips(tmp_path):
    run = Results(
        info={"num_trials": 2},
        tasks=[{"id": "1"}],
        simulations=[sim("1", 0, 1.0, note="é"), sim("1", 1, 0.0)],
    )
    path = tmp_path / "deep" / "run.json"
    run.save(path)
    text = path.read_text(encoding="utf-8")
    assert "é" in text  # UTF-8 kept, not escaped
    lines = text.splitlines()
    assert sum(line.startswith('{"task_id"') for line in lines) == 2
    back = Results.load(path)
    assert back.to_dict() == json.loads(text) == run.to_dict()
    assert back.finished() == {("1", 0), ("1", 1)}
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]  # no temp file left
    assert path.stat().st_mode & 0o777 != 0o600  # a normal file, not mkstemp's private one


def test_a_failed_save_keeps_the_old_file(tmp_path):
    path = tmp_path / "run.json"
    Results(simulations=[sim("1", 0, 1.0)]).save(path)
    before = path.read_text()
    with pytest.raises(TypeError):
        Results(simulations=[sim("1", 0, 1.0, bad=object())]).save(path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_loading_bad_files_fails_with_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such results file"):
        Results.load(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        Results.load(broken)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a results file"):
        Results.load(other)
    other.write_text('{"simulations": [{"no_task": 1}]}')
    with pytest.raises(ValueError, match="simulation 0"):
        Results.load(other)
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([sim("4", 0, 1.0)]))
    assert Results.load(bare).simulations[0]["task_id"] == "4"


# --- summary and plot -----------------------------------------------------------------------
def test_summary_counts_terminations_errors_steps_and_cost():
    messages = tau2_messages(EPISODE)
    sims = [
        sim("1", 0, 1.0, termination_reason="agent_stop", messages=messages, agent_cost=0.25),
        sim("1", 1, 0.0, termination_reason="agent_error", agent_cost=None, duration=2.0),
    ]
    sims[1]["reward_info"]["info"] = {"error": "agent LLM failed"}
    summary = summarize({"info": {"num_trials": 2}, "simulations": sims})
    assert summary["pass_hat_k"] == {1: 0.5, 2: 0.0}
    assert summary["terminations"] == {"agent_stop": 1, "agent_error": 1}
    assert summary["tool_errors_per_episode"] == 0.5  # one error tool message in sim 0
    # sim 0: user, 3 agent messages, 3 tool batches, the ###STOP### message; greeting free.
    assert summary["max_steps_seen"] == 8 and summary["steps_per_episode"] == 4
    assert summary["agent_cost"] == 0.25 and summary["user_cost"] is None
    assert summary["errors"] == ["task 1 trial 1: agent LLM failed"]
    text = format_summary(summary)
    assert "k=1: 0.500  k=2: 0.000" in text and "agent_error 1" in text
    assert "agent cost: $0.2500" in text and "error: task 1 trial 1" in text


def test_plot_needs_matplotlib_and_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'airline-gym\[plot\]'"):
        plot_pass_hat_k({"x": {1: 0.5}}, tmp_path / "p.png")


def test_plot_writes_a_png(tmp_path):
    import_optional("matplotlib")
    path = tmp_path / "p.png"
    plot_pass_hat_k({"a": {1: 0.8, 2: 0.6}, "b": {1: 0.5, 2: 0.3}}, path, title="t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("curve", "limits"), [({1: 0.4}, (0.5, 1.5)), ({1: 1, 2: 1, 3: 1}, (0.5, 3.5))]
)
def test_the_k_axis_is_whole_numbers_around_the_points(tmp_path, curve, limits):
    """One trial: one point at k = 1 in the middle of the axis, not on 0.945-1.05."""
    import_optional("matplotlib")
    figure = plot_pass_hat_k({"run": curve}, tmp_path / "p.png")
    axes = figure.axes[0]
    assert axes.get_xlim() == limits
    ticks = [t for t in axes.get_xticks() if limits[0] <= t <= limits[1]]
    assert ticks == list(range(1, len(curve) + 1))


def test_recorded_tau2_file_loads_and_summarizes():
    here = Path(__file__).resolve()
    shared = next((p / "shared" for p in here.parents if (p / "shared").is_dir()), here)
    path = shared / "trajectories"
    path /= "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json"
    if not path.is_file():
        pytest.skip("../shared/trajectories is absent")
    run = Results.load(path)
    summary = summarize(run)
    assert summary["simulations"] == 50 and summary["successes"] == 36  # trajectories README
    assert summary["pass_hat_k"] == {1: pytest.approx(36 / 50)}
    assert summary["agent_cost"] > 0 and summary["agent_tokens"]["prompt_tokens"] > 0
