"""The evaluation harness: ``evaluate()`` in process and ``airline-gym eval`` end to end."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from airline_gym.agents import LiteLLMAgent
from airline_gym.cli.eval import _ProgressDisplay
from airline_gym.env import AirlineEnv
from airline_gym.harness.evaluate import EvalConfig, episode_seed, evaluate
from airline_gym.harness.results import Results, pass_hat_k, sim_reward, simulation_record
from airline_gym.harness.runner import run_episode
from airline_gym.testing import OpenAIServer, Reply
from airline_gym.testing.reference import tau2_reads_results
from airline_gym.users import UserSimulator

REPO = Path(__file__).resolve().parents[2]
NOOP_PASSES_TAU2 = {"0", "1", "4", "5", "6", "10", "13"}  # the first few of the 19
TIMING = ("timestamp", "start_time", "end_time", "duration")


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120, **kw: Any):
    """Run ``python -m airline_gym.cli ARGS``; returns the CompletedProcess."""
    full_env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=kw.pop("cwd", None),
        **kw,
    )


def without_timing(sims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Simulations minus wall-clock fields (run-to-run noise)."""
    out = []
    for sim in sims:
        sim = {k: v for k, v in sim.items() if k not in TIMING}
        sim["messages"] = [
            {k: v for k, v in m.items() if k != "timestamp"} for m in sim["messages"]
        ]
        out.append(sim)
    return out


# --- in process -----------------------------------------------------------------------------
def test_gold_run_is_complete_sorted_seeded_and_reproducible(tmp_path):
    config = EvalConfig(task_ids=["17", "0", "5"], trials=2, seed=11)
    results = evaluate("gold", config, out=tmp_path / "a.json")
    sims = results.simulations
    assert [(s["task_id"], s["trial"]) for s in sims] == [
        ("17", 0), ("17", 1), ("0", 0), ("0", 1), ("5", 0), ("5", 1),
    ]  # fmt: skip
    assert all(s["reward_info"]["reward"] == 1.0 for s in sims)
    assert [s["seed"] for s in sims] == [episode_seed(11, s["task_id"], s["trial"]) for s in sims]
    assert len({s["seed"] for s in sims}) == 6 and len({s["id"] for s in sims}) == 6
    assert pass_hat_k(results) == {1: 1.0, 2: 1.0}
    info = results.info
    assert info["num_trials"] == 2 and info["seed"] == 11 and info["task_ids"] == ["17", "0", "5"]
    assert info["agent_info"]["implementation"] == "gold_agent"
    assert info["environment_info"]["domain_name"] == "airline"
    assert [t["id"] for t in results.tasks] == ["17", "0", "5"]
    assert Results.load(tmp_path / "a.json").to_dict() == results.to_dict()
    again = evaluate("gold", config, out=tmp_path / "b.json")
    assert without_timing(again.simulations) == without_timing(sims)


def test_concurrent_episodes_give_the_same_results():
    config = EvalConfig(task_ids=[str(i) for i in range(12)], trials=2, concurrency=1)
    one = evaluate("gold", config)
    config.concurrency = 6
    six = evaluate("gold", config)
    assert without_timing(six.simulations) == without_timing(one.simulations)


def test_noop_run_passes_exactly_the_do_nothing_tasks():
    results = evaluate("noop", EvalConfig())
    passed = {s["task_id"] for s in results.simulations if s["reward_info"]["reward"] == 1.0}
    assert len(passed) == 19 and passed >= NOOP_PASSES_TAU2


def _first_user_message(task_id: str) -> str:
    obs, _ = AirlineEnv(user="scripted").reset(seed=0, options={"task": task_id})
    return obs[0]["content"]


def test_llm_agent_that_keeps_failing_ends_with_agent_error_and_the_run_goes_on(tmp_path):
    broken = _first_user_message("0")
    faults = iter(["garbage", "500", "garbage", "500"])

    def respond(body: dict[str, Any]) -> Reply:  # task 0's requests fail, whatever happens
        if any(m.get("content") == broken for m in body["messages"]):
            return Reply(fault=next(faults))
        return Reply(tool_calls=[{"name": "done", "arguments": {}}])

    with OpenAIServer(respond) as server:

        def make(seed: int) -> LiteLLMAgent:
            return LiteLLMAgent(
                "openai/agent",
                api_base=server.base_url,
                api_key="sk-test",
                max_retries=1,
                llm_args={"backoff": 0.01},
                seed=seed,
            )

        results = evaluate(make, EvalConfig(task_ids=["0", "1"]), out=tmp_path / "r.json")
        assert len(server.requests) == 3  # two tries for task 0, one reply for task 1
    failed, ok = results.simulations
    assert failed["termination_reason"] == "agent_error"
    assert failed["reward_info"]["reward"] == 0.0 and failed["reward_info"]["db_check"] is None
    assert "HTTP 500" in failed["reward_info"]["info"]["error"]  # the last attempt's failure
    assert "after 2 attempts" in failed["reward_info"]["info"]["error"]
    assert "agent_error" in failed["reward_info"]["info"]["note"]
    assert [m["role"] for m in failed["messages"]] == ["assistant", "user"]
    assert ok["termination_reason"] == "agent_stop" and ok["reward_info"]["reward"] == 1.0
    assert results.info["agent_info"] == {
        "implementation": "LiteLLMAgent",
        "llm": "openai/agent",
        "llm_args": {"temperature": 0.0, "api_base": server.base_url},
    }
    assert "sk-test" not in (tmp_path / "r.json").read_text()


class FlakyAgent:
    """Raises on its first action when ``fail`` is set, else calls done."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail

    def reset(self, info: dict[str, Any]) -> None:
        """Nothing to prepare."""

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """Fail, or stop."""
        if self.fail:
            raise KeyError("no such thing")
        return {"role": "assistant", "content": "Bye. ###STOP###"}


def test_any_agent_exception_is_recorded_and_retry_errors_reruns_those(tmp_path):
    out = tmp_path / "flaky.json"
    config = EvalConfig(task_ids=["0", "1"], trials=2)
    first = evaluate(FlakyAgent(fail=True), config, out=out)
    assert {s["termination_reason"] for s in first.simulations} == {"agent_error"}
    cause = first.simulations[0]["reward_info"]["info"]["error"]
    assert cause == "agent raised KeyError: 'no such thing'"
    # A plain resume keeps finished simulations, errors included: nothing runs.
    calls: list[int] = []

    def counting(seed: int) -> FlakyAgent:
        calls.append(seed)
        return FlakyAgent(fail=False)

    same = evaluate(counting, config, out=out, resume=True)
    assert len(calls) == 1  # only the one that describes the agent
    assert same.simulations == first.simulations
    fixed = evaluate(counting, config, out=out, resume=True, retry_errors=True)
    assert {s["termination_reason"] for s in fixed.simulations} == {"agent_stop"}
    assert len(fixed.simulations) == 4 and len(calls) == 6


def test_resume_refuses_a_different_run(tmp_path):
    out = tmp_path / "noop.json"
    evaluate("noop", EvalConfig(task_ids=["0"]), out=out)
    with pytest.raises(ValueError) as refused:
        evaluate("gold", EvalConfig(task_ids=["0"]), out=out, resume=True)
    # in the words of the command line, no Python reprs (issue 27, F33)
    assert "it was run with the agent noop_agent, this run has gold_agent" in str(refused.value)
    assert "[" not in str(refused.value) and "None" not in str(refused.value)
    with pytest.raises(ValueError, match="--seed 300, this run has 1"):
        evaluate("noop", EvalConfig(task_ids=["0"], seed=1), out=out, resume=True)
    # More trials is fine: the run grows.
    grown = evaluate("noop", EvalConfig(task_ids=["0"], trials=3), out=out, resume=True)
    assert [s["trial"] for s in grown.simulations] == [0, 1, 2]
    assert grown.info["num_trials"] == 3
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"simulations": []}))
    with pytest.raises(ValueError, match="not written by airline-gym eval"):
        evaluate("noop", EvalConfig(task_ids=["0"]), out=foreign, resume=True)


def test_bad_configs_fail_clearly():
    with pytest.raises(ValueError, match="trials must be"):
        evaluate("noop", EvalConfig(trials=0))
    with pytest.raises(KeyError, match="no task '99'"):
        evaluate("noop", EvalConfig(task_ids=["1", "99"]))
    with pytest.raises(ValueError, match="unknown agent"):
        evaluate("smart", EvalConfig(task_ids=["1"]))
    with pytest.raises(ValueError, match="resume needs"):
        evaluate("noop", EvalConfig(task_ids=["1"]), resume=True)


class Mute(UserSimulator):
    """A customer who never says anything."""

    offline = True

    def reset(self, task: Any, seed: int | None = None) -> None:
        """Nothing to prepare."""

    def reply(self, dialogue: Any) -> str:
        """Blank."""
        return "   "


def test_run_episode_records_a_user_failure_with_its_cause():
    env = AirlineEnv(user=Mute())
    sim = simulation_record(run_episode(env, FlakyAgent(fail=False), "0"), env.task_set["0"])
    assert sim["termination_reason"] == "user_error"
    assert "empty reply" in sim["reward_info"]["info"]["error"]


# --- the command line, end to end -------------------------------------------------------------
def _respond(body: dict[str, Any]) -> Reply:
    """Agent requests carry tools; the customer's do not."""
    messages = body["messages"]
    if body.get("tools"):
        if messages[-1]["role"] == "tool":
            return Reply("I found your profile. Your account is all set.")
        if any(m.get("tool_calls") for m in messages):
            return Reply(tool_calls=[{"name": "done", "arguments": {}}])
        call = {"id": "lookup", "name": "get_user_details", "arguments": {"user_id": "mia_li_3668"}}
        return Reply(tool_calls=[call])
    own_turns = sum(m["role"] == "assistant" for m in messages)
    if own_turns == 0:
        return Reply("Hi! I'm Mia Li, user id mia_li_3668. Can you check my account?")
    return Reply("Great, thanks, that is all. ###STOP###")


def test_eval_with_llm_agent_and_llm_user_round_trips_through_regrade(tmp_path):
    out = tmp_path / "llm.json"
    with OpenAIServer(_respond) as server:
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # keyless server
        done = cli(
            "eval", "--agent-model", "openai/agent", "--api-base", server.base_url,
            "--user-model", "openai/user", "--user-api-base", server.base_url,
            "--task-ids", "0,3", "--trials", "2", "--concurrency", "2", "--max-retries", "0",
            "--out", str(out), "--json",
            env={**env, "OPENAI_API_KEY": ""},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        agent_requests = [r for r in server.requests if r.get("tools")]
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["simulations"] == 4 and summary["out"] == str(out)
    # Task 0 wants nothing changed; task 3 wants a fact said that this agent never says.
    assert summary["pass_hat_k"] == {"1": 0.5, "2": 0.5}
    assert summary["terminations"] == {"user_stop": 4}
    assert summary["agent_tokens"]["prompt_tokens"] > 0
    assert len(agent_requests) == 8  # lookup + message per episode
    assert "[4/4]" in done.stderr  # plain progress lines when not a terminal

    results = Results.load(out)
    first = results.simulations[0]
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["assistant", "user", "assistant", "tool", "assistant", "user"]
    call = first["messages"][2]["tool_calls"][0]
    assert call == {
        "id": "lookup",
        "name": "get_user_details",
        "arguments": {"user_id": "mia_li_3668"},
        "requestor": "assistant",
    }
    tool = first["messages"][3]
    assert (tool["id"], tool["requestor"], tool["error"]) == ("lookup", "assistant", False)
    assert first["messages"][2]["usage"]["prompt_tokens"] > 0
    assert results.info["user_info"]["llm"] == "openai/user"
    assert results.info["user_info"]["implementation"] == "user_simulator"
    assert "EMPTY" not in out.read_text()  # the placeholder key is never recorded

    regraded = cli("regrade", str(out), "--json")
    assert regraded.returncode == 0, regraded.stderr
    rows = [json.loads(line) for line in regraded.stdout.splitlines()]
    ours = {s["id"]: s["reward_info"]["reward"] for s in results.simulations}
    assert {r["simulation_id"]: r["reward"] for r in rows} == ours
    assert all(r["agrees"] and r["output_mismatches"] == 0 for r in rows)
    assert "agreement: 4/4" in regraded.stderr
    _check_with_tau2(out)


def _check_with_tau2(path: Path) -> None:
    """tau2-bench's own Results model reads the file (when the reference is installed)."""
    assert tau2_reads_results(path) in (None, (4, "get_user_details"))


SLOW_GOLD = """
import sys, time
from airline_gym import agents
act = agents.GoldAgent.act
def slow(self, observation, info):
    time.sleep(0.01)
    return act(self, observation, info)
agents.GoldAgent.act = slow
from airline_gym.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _count(path: Path) -> int:
    """Simulations journalled so far (the journal's lines after its header)."""
    try:
        return max(0, path.with_name(path.name + ".journal").read_text().count("\n") - 1)
    except OSError:
        return 0


def test_killed_run_resumes_to_the_same_results_as_an_uninterrupted_one(tmp_path):
    args = ["eval", "--agent", "gold", "--task-ids", ",".join(map(str, range(20))), "--trials", "2"]
    killed = tmp_path / "killed.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_GOLD, *args, "--out", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    try:
        deadline = time.monotonic() + 60
        while _count(killed) < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    partial = _count(killed)
    assert 5 <= partial < 40, f"the run was not killed midway ({partial} simulations)"

    resumed = cli(*args, "--out", str(killed), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {partial}/40" in resumed.stderr
    assert f"[{partial + 1}/40]" in resumed.stderr
    whole = tmp_path / "whole.json"
    assert cli(*args, "--out", str(whole)).returncode == 0
    a, b = Results.load(killed), Results.load(whole)
    assert len(a.simulations) == 40
    assert without_timing(a.simulations) == without_timing(b.simulations)
    assert a.tasks == b.tasks and a.info == b.info
    assert not list(tmp_path.glob(".*.tmp"))
    again = cli(*args, "--out", str(killed), "--resume")
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_plot_draws_the_pass_hat_k_curve_or_says_what_is_missing(tmp_path):
    png = tmp_path / "curve.png"
    done = cli(
        "eval", "--agent", "noop", "--task-ids", "0,2", "--trials", "2",
        "--out", str(tmp_path / "r.json"), "--plot", str(png),
    )  # fmt: skip
    if importlib.util.find_spec("matplotlib") is None:  # a missing extra is a usage error: 2
        assert done.returncode == 2
        assert done.stderr.strip() == (
            "airline-gym eval: error: --plot needs matplotlib: pip install 'airline-gym[plot]'"
        )
        assert not (tmp_path / "r.json").exists()  # checked before running anything
        return
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "pass^k: k=1: 0.500  k=2: 0.500" in done.stdout
    assert f"plot: {png}" in done.stdout


def test_progress_is_a_bar_on_a_terminal_and_lines_otherwise():
    """done/total, the running pass rate, the rate and the ETA, on a terminal (a tqdm bar) and
    in a log (plain lines)."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    sim = {"task_id": "3", "trial": 0, "reward_info": {"reward": 1.0}, "termination_reason": "x"}
    run = Results(simulations=[sim])
    terminal = Terminal()
    display = _ProgressDisplay(terminal)
    display.start(0, 4, Results())
    display.update(sim, 1, 4, run)
    display.close()
    shown = terminal.getvalue()
    assert "1/4 [" in shown and "pass 1/1 (100%)" in shown and "sim/s" in shown and "\r" in shown
    ticks = iter([0.0, 4.0])  # a clock: the second simulation ends 4 s after the start
    plain = io.StringIO()
    display = _ProgressDisplay(plain, clock=lambda: next(ticks))
    display.start(1, 4, run)
    display.update(sim, 2, 4, Results(simulations=[sim, sim]))
    display.close()
    assert plain.getvalue().splitlines() == [
        "resuming: 1/4 simulations already done; pass 1/1 (100%)",
        "[2/4] task 3 trial 0: reward 1 (x); pass 2/2 (100%); 4.0 s/sim, ETA 00:08",
    ]


def test_progress_of_a_large_run_in_a_log_is_a_line_every_ten_seconds():
    from airline_gym.cli.eval_progress import LINE_EVERY_S

    now = [0.0]
    plain = io.StringIO()
    display = _ProgressDisplay(plain, clock=lambda: now[0])
    display.start(0, 2000, Results())
    sims = []
    for done in range(1, 2001):
        now[0] = done * 0.1  # 10 simulations a second
        sim = {"task_id": f"g0_{done}", "trial": 0, "reward_info": {"reward": float(done % 2)}}
        sims.append(sim)
        display.update({**sim, "termination_reason": "user_stop"}, done, 2000, Results())
    lines = plain.getvalue().splitlines()
    assert len(lines) == 200 / LINE_EVERY_S  # 200 s of work: one line per 10 s, the last at the end
    assert lines[0] == "[100/2000] pass 50/100 (50%); 10.00 sim/s, ETA 03:10"
    assert lines[-1] == "[2000/2000] pass 1000/2000 (50%); 10.00 sim/s, ETA 00:00"


class BlockingOnly:
    """A LiteLLMAgent seen through ``act`` alone: evaluate must play it in threads."""

    def __init__(self, agent: LiteLLMAgent) -> None:
        self.agent = agent

    def reset(self, info: dict[str, Any]) -> None:
        self.agent.reset(info)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        return self.agent.act(observation, info)


def _bodies(requests: list[dict[str, Any]]) -> list[str]:
    """Request bodies as sorted JSON texts, tool-call ids replaced by their order in each body."""
    out = []
    for body in requests:
        text = json.dumps(body)
        calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]
        for i, call_id in enumerate(dict.fromkeys(calls)):
            text = text.replace(json.dumps(call_id), f'"id{i}"')
        out.append(text)
    return sorted(out)


@pytest.mark.parametrize("protocol", ["leaderboard", "gym"])
def test_the_event_loop_path_sends_what_the_threaded_path_sends(protocol):
    """An async agent runs on one event loop (envs reused), a blocking one in threads (an env
    per episode): the same request bodies, byte for byte, and the same simulations."""
    with OpenAIServer(_respond) as server:
        config = EvalConfig(
            task_ids=["0", "3", "5"],
            trials=2,
            concurrency=3,
            user="llm",
            user_model="openai/user",
            user_llm_args={"api_base": server.base_url},
            protocol=protocol,
        )

        def llm(seed: int) -> LiteLLMAgent:
            return LiteLLMAgent("openai/agent", api_base=server.base_url, seed=seed)

        acts: list[int] = []
        original = LiteLLMAgent.act

        def counted(self: LiteLLMAgent, observation: Any, info: dict[str, Any]) -> Any:
            acts.append(1)
            return original(self, observation, info)

        LiteLLMAgent.act = counted  # type: ignore[method-assign]
        try:
            looped = evaluate(llm, config)
            assert acts == []  # the loop path awaited aact and never blocked
            loop_requests = list(server.requests)
            server.requests.clear()
            threaded = evaluate(lambda seed: BlockingOnly(llm(seed)), config)
            assert len(acts) > 0
        finally:
            LiteLLMAgent.act = original  # type: ignore[method-assign]
        thread_requests = list(server.requests)
    assert len(loop_requests) == len(thread_requests) > 6 * 3
    assert _bodies(loop_requests) == _bodies(thread_requests)

    def outcome(results: Results) -> list[tuple[Any, ...]]:
        return [
            (s["task_id"], s["trial"], s["seed"], s["termination_reason"], sim_reward(s))
            for s in results.simulations
        ]

    assert outcome(looped) == outcome(threaded)


def test_evaluate_called_from_inside_an_event_loop_still_runs():
    """Inside a running loop (a notebook, an async app) evaluate cannot start its own loop: it
    plays the episodes in threads and gives the same simulations."""
    import asyncio

    config = EvalConfig(task_ids=["0", "1", "2"], trials=2, concurrency=2)
    outside = evaluate("gold", config)

    async def inside() -> Results:
        return evaluate("gold", config)

    within = asyncio.run(inside())
    assert without_timing(within.simulations) == without_timing(outside.simulations)
    assert [sim_reward(s) for s in within.simulations] == [1.0] * 6


class _Agent:
    """A blocking agent (played in threads): raises when ``broken``, else ends at once."""

    def __init__(self, broken: bool) -> None:
        self.broken = broken

    def reset(self, info: dict[str, Any]) -> None:
        pass

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        if self.broken:
            raise RuntimeError("the model's server is down")
        return {"name": "done", "arguments": {}}


def test_max_failures_starts_no_more_episodes_and_keeps_the_finished_ones(tmp_path: Path) -> None:
    from airline_gym.harness.failures import FailureLimitReached

    made: list[int] = []

    def second_and_third_broken(seed: int) -> _Agent:
        made.append(seed)  # the first is evaluate()'s sample agent, then one per episode
        return _Agent(broken=len(made) in (3, 4))

    out = tmp_path / "stopped.json"
    config = EvalConfig(task_ids=[str(i) for i in range(10)], concurrency=1)
    with pytest.raises(FailureLimitReached) as caught:
        evaluate(second_and_third_broken, config, out=out, max_failures=2)
    stop = caught.value
    assert (stop.saved, stop.total, dict(stop.causes)) == (3, 10, {"agent_error": 2})
    assert stop.journal is not None and stop.journal.is_file()
    # resumed with a working agent: the failed ones replayed, the rest played
    results = evaluate(lambda seed: _Agent(False), config, out=out, resume=True, retry_errors=True)
    assert [s["task_id"] for s in results.simulations] == [str(i) for i in range(10)]
    assert {s["termination_reason"] for s in results.simulations} == {"agent_stop"}
