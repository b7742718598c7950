"""tau3's failure policy: a failed simulation is re-run from the start (same seed), then given up.

The LLM path runs ``airline-gym eval`` against a real scripted OpenAI-compatible server on
127.0.0.1 whose answers fail (HTTP 429, retried by the client at once) before they succeed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airline_gym.agents import builtin_agent
from airline_gym.cli.main import main
from airline_gym.domain.tasks import load_task_set
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.regrade import regrade_run
from airline_gym.harness.regrade import summary as regrade_summary
from airline_gym.harness.results import format_summary, pass_hat_k, summarize
from airline_gym.testing.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.usefixtures("tau3")
OK, FLAKY = "0", "1"  # tau3 task 0 passes with nothing done; task 1's agent may fail
REQUEST_ATTEMPTS = 4  # tau3: each request is tried once and retried 3 times


class Flaky:
    """Answers agent and customer from the body; fails the first ``failures[role]`` requests of
    role ``"agent"``/``"user"`` in task ``FLAKY``'s conversation."""

    def __init__(self, agent: int = 0, user: int = 0) -> None:
        self.failures = {"agent": agent, "user": user}
        tasks = load_task_set("tau3")
        self.reasons = {
            t: tasks[t].raw["user_scenario"]["instructions"]["reason_for_call"].split("\n")[0]
            for t in (OK, FLAKY)
        }

    def task(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        if body.get("tools"):
            first = next(m["content"] for m in messages if m["role"] == "user")
            return first.split("]")[0].strip("[")
        return next(
            t for t, reason in self.reasons.items() if reason.strip() in messages[0]["content"]
        )

    def __call__(self, body: dict[str, Any]) -> Reply:
        role, task = ("agent" if body.get("tools") else "user"), self.task(body)
        if task == FLAKY and self.failures[role] != 0:
            self.failures[role] -= 1
            return Reply(fault="429")
        if role == "agent":
            return Reply("How can I help you further?")
        turns = sum(m["role"] == "assistant" for m in body["messages"])
        return Reply(f"[{task}] Hello." if turns == 0 else "Thanks, bye. ###STOP###")


def run_eval(server: OpenAIServer, out: Path, *extra: str) -> dict[str, Any]:
    url = server.base_url
    argv = [
        "eval", "--agent-model", "openai/agent", "--api-base", url,
        "--user", "llm", "--user-model", "openai/user", "--user-api-base", url,
        "--task-ids", f"{OK},{FLAKY}", "--out", str(out), "--json", *extra,
    ]  # fmt: skip
    assert main(argv) == 0
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def requests_of(server: OpenAIServer, script: Flaky, task: str, role: str) -> list[dict[str, Any]]:
    return [
        b
        for b in server.requests
        if script.task(b) == task and bool(b.get("tools")) == (role == "agent")
    ]


@pytest.mark.parametrize("role", ["agent", "user"])
def test_a_failed_simulation_is_rerun_from_the_start_with_the_same_seed(
    role: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Flaky(**{role: REQUEST_ATTEMPTS})  # one whole attempt's worth of failures
    with OpenAIServer(script) as server:
        results = run_eval(server, tmp_path / "run.json", "--benchmark", "tau3")
    sims = {s["task_id"]: s for s in results["simulations"]}
    assert [sims[t]["termination_reason"] for t in (OK, FLAKY)] == ["user_stop", "user_stop"]
    assert sims[FLAKY]["reward_info"]["reward"] == 1.0
    assert results["info"]["benchmark"] == "tau3"
    users = requests_of(server, script, FLAKY, "user")
    agents = requests_of(server, script, FLAKY, "agent")
    # the first attempt: the opening (and, if the customer failed, its retries), then the
    # agent's failing requests; the second: the whole conversation again
    failed_first = 1 if role == "agent" else REQUEST_ATTEMPTS
    assert len(users) == failed_first + 2
    assert len(agents) == (REQUEST_ATTEMPTS if role == "agent" else 0) + 1
    assert users[0] == users[failed_first]  # the same first request, seed included
    assert len({b["seed"] for b in users + agents}) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["infrastructure_errors"] == 0 and summary["pass_hat_k"] == {"1": 1.0}


def test_failing_every_attempt_is_an_infrastructure_error_left_out_of_the_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Flaky(agent=-1)  # the agent's model fails for good
    out = tmp_path / "run.json"
    with OpenAIServer(script) as server:
        results = run_eval(server, out, "--benchmark", "tau3", "--max-retries", "1")
        agents = requests_of(server, script, FLAKY, "agent")
    sims = {s["task_id"]: s for s in results["simulations"]}
    failed = sims[FLAKY]
    assert failed["termination_reason"] == "infrastructure_error"
    assert failed["reward_info"] is None and failed["messages"] == []
    assert failed["info"]["failed_after_attempts"] == 2 and "429" in failed["info"]["error"]
    assert len(agents) == 2 * REQUEST_ATTEMPTS  # two attempts, each request tried 4 times
    summary = json.loads(capsys.readouterr().out)
    assert summary["infrastructure_errors"] == 1 and summary["failures"] == "left out"
    assert summary["pass_hat_k"] == {"1": 1.0} and summary["mean_reward"] == 1.0
    counted = summarize(json.loads(out.read_text()), count_failures_as_zero=True)
    assert counted["pass_hat_k"] == {1: 0.5} and counted["mean_reward"] == 0.5
    text = format_summary(summarize(json.loads(out.read_text())))
    assert "infrastructure errors: 1 (left out of pass^k and the mean reward" in text
    assert "mean reward: 1.000 (1/1 successes)" in text
    # tasks 0 and 1 are the same in both versions: the info tells; the failure has no grade
    regraded = regrade_run(out)
    assert regraded.benchmark == "tau3" and regraded.how == "recorded in the file's info"
    assert [r.grade is None for r in regraded.results] == [False, True]
    assert regrade_summary(regraded.results) == (
        "agreement: 2/2 simulations (1 infrastructure_error, not graded: no reward)"
    )


def test_count_failures_as_zero_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.json"
    with OpenAIServer(Flaky(agent=-1)) as server:
        run_eval(server, out, "--benchmark", "tau3", "--max-retries", "0")
        capsys.readouterr()
        run_eval(server, out, "--benchmark", "tau3", "--max-retries", "0", "--resume",
                 "--count-failures-as-zero")  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["failures"] == "counted as 0" and summary["infrastructure_errors"] == 1
    assert summary["pass_hat_k"] == {"1": 0.5} and summary["mean_reward"] == 0.5
    assert "in both" in format_summary({**summary, "pass_hat_k": {}})


def test_under_tau2_a_failure_is_recorded_as_it_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Flaky(agent=REQUEST_ATTEMPTS)
    with OpenAIServer(script) as server:
        results = run_eval(server, tmp_path / "run.json")
    sims = {s["task_id"]: s for s in results["simulations"]}
    assert sims[FLAKY]["termination_reason"] == "agent_error"
    assert sims[FLAKY]["reward_info"]["reward"] == 0.0
    assert len(requests_of(server, script, FLAKY, "user")) == 1  # no second attempt
    assert results["info"]["benchmark"] == "tau2"
    summary = json.loads(capsys.readouterr().out)
    assert summary["infrastructure_errors"] == 0 and summary["pass_hat_k"] == {"1": 0.5}


class _FailsFirst:
    """An agent whose first ``act`` raises for the first ``count[0]`` episodes (no ``aact``:
    the evaluation plays it in threads)."""

    def __init__(self, inner: Any, count: list[int]) -> None:
        self.inner, self.count = inner, count

    def reset(self, info: dict[str, Any]) -> None:
        self.inner.reset(info)
        self.raise_now = self.count[0] > 0
        self.count[0] -= 1

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        if self.raise_now:
            raise RuntimeError("boom")
        return self.inner.act(observation, info)


@pytest.mark.parametrize(("fails", "ending"), [(2, "user_stop"), (5, "infrastructure_error")])
def test_the_threaded_path_follows_the_same_policy(fails: int, ending: str) -> None:
    tasks = load_task_set("tau3")
    count = [fails]

    def make(seed: int) -> _FailsFirst:
        return _FailsFirst(builtin_agent("gold", tasks, seed), count)

    config = EvalConfig(benchmark="tau3", protocol="leaderboard", task_ids=["7"], retry_delay=0.0)
    results = evaluate(make, config)
    [sim] = results.simulations
    assert sim["termination_reason"] == ending
    if ending == "user_stop":
        assert sim["reward_info"]["reward"] == 1.0  # tau3's task 7, replayed by the gold agent
    else:
        assert "RuntimeError" in sim["info"]["error"] and sim["info"]["failed_after_attempts"] == 4
        assert pass_hat_k(results) == {}
