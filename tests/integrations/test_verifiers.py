"""The verifiers adapter with the real verifiers 0.4: its own eval runner plays airline episodes.

verifiers' ``run_eval`` (what ``vf-eval`` runs) resolves the taskset id ``airline-gym-verifiers``
through its plugin loader, plans the rollouts and plays them concurrently: each model call goes
through verifiers' interception server to a scripted OpenAI-compatible server on 127.0.0.1,
verifiers scores each trace with the task's reward and metrics and writes ``traces.jsonl``. The
same assistant messages replayed against an in-process env give the grades it must report.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from extras import lazy, require
from readme_examples import readme_example, run_example
from scripted_policy import Model, in_process, scripts

from airline_gym.env import AirlineEnv
from airline_gym.testing.openai_server import OpenAIServer, Reply

require("verifiers")
vf = lazy("verifiers.v1")  # ~8 s to import: only the worker that runs these tests pays
adapter = lazy("airline_gym.integrations.verifiers")

README_URL = "http://localhost:8000/v1"  # the endpoint the README example names
DONE_CALL = {"name": "done", "arguments": {}}


def test_vf_eval_rewards_are_the_env_grades(tau2_tasks, tmp_path, tau3):
    """The README example (on tau3's tasks), run by verifiers' own eval runner against a
    scripted server."""
    plays = scripts(tau2_tasks)
    tools = AirlineEnv(user="scripted").reset(options={"task": "17"})[1]["tools"]
    with OpenAIServer(Model(plays)) as server:
        code = readme_example("verifiers")
        assert code.count(README_URL) == 1
        code = code.replace(README_URL, server.base_url).replace('"outputs"', repr(str(tmp_path)))
        episodes = run_example("verifiers", code=code)["episodes"]  # the README example

    traces = {t.task.data.id: t for e in episodes for t in e.traces}
    assert sorted(traces) == ["17", "3"] and all(e.ok for e in episodes)
    for task_id, seed in (("17", 0), ("3", 1)):  # the taskset's seeds count up from 0
        trace, expected = traces[task_id], in_process(task_id, seed, plays[task_id], "tau3")
        assert trace.task.data.seed == seed and trace.task.data.benchmark == "tau3"
        assert trace.info["airline"]["benchmark"] == "tau3"
        assert trace.reward == expected.reward == {"17": 1.0, "3": 0.0}[task_id]
        assert trace.rewards["grade"].score == expected.reward
        metrics = trace.metrics
        assert metrics["steps"] == expected.steps
        assert metrics["tool_errors"] == expected.num_errors == {"17": 0, "3": 1}[task_id]
        assert metrics["tool_calls"] == len(plays[task_id]) - (task_id == "17")  # all but the text
        assert metrics["terminated_agent_stop"] == 1.0 and metrics["terminated_user_stop"] == 0.0
        summary = trace.info["airline"]
        assert summary["termination_reason"] == expected.termination_reason == "agent_stop"
        assert summary["reward_info"] == expected.reward_info
        # the trace verifiers recorded is the episode's conversation, tool results included
        roles = [m.role for m in trace.messages]
        assert roles[:3] == ["system", "assistant", "user"] and roles.count("tool") == (
            metrics["tool_calls"] - 1  # done ends the episode: no result comes back
        )

    # every request carried the env's tools array (the reference's schemas), unchanged, and the
    # customer's answer to the model's text came back as a user message
    assert server.requests and all(body["tools"] == tools for body in server.requests)
    after_text = [b["messages"] for b in server.requests if len(b["messages"]) == 5]
    assert any(m[3].get("content") == "Sure, let me look into that." for m in after_text)
    assert all(m[4]["role"] == "user" for m in after_text if m[3].get("content"))
    # verifiers wrote the run: one line per rollout, with the rewards
    lines = [
        json.loads(line) for line in next(tmp_path.rglob("traces.jsonl")).read_text().splitlines()
    ]
    assert sorted(line["traces"][0]["task"]["data"]["id"] for line in lines) == ["17", "3"]


def test_llm_customer_and_failed_calls():
    """``task.user = "llm"`` puts an LLM customer in the episode; a model or customer call that
    fails is a failed rollout (verifiers' error, which its retries see), not a zero grade."""
    opener = Reply("I need to change my flight, please.")
    customer = OpenAIServer([opener, opener], default=Reply(fault="500"))  # 3rd rollout: 500
    with customer, OpenAIServer([Reply(tool_calls=[DONE_CALL])]) as model:  # 2nd rollout: 500
        llm_user = {"api_base": customer.base_url, "api_key": "sk-test", "num_retries": 0}
        env = adapter.load_environment(
            task_ids=["17"],
            task={"user": "llm", "user_model": "openai/customer", "user_llm_args": llm_user},
        )
        assert isinstance(env, vf.Env) and env.config.taskset.id == adapter.PLUGIN_ID
        first, failed, no_customer = play(env, model.base_url, rollouts=3)
    assert model.requests[0]["messages"][2] == {
        "role": "user",
        "content": "I need to change my flight, please.",
    }
    assert customer.requests and customer.requests[0]["model"] == "customer"
    trace = first.traces[0]
    assert trace.ok and trace.reward == 0.0
    assert trace.info["airline"]["termination_reason"] == "agent_stop"
    bad = failed.traces[0]
    assert not failed.ok and not bad.ok and bad.errors and bad.rewards == {}
    assert bad.info["airline"]["termination_reason"] == "agent_error"
    # verifiers reports the provider's own failure, which the harness's error was caused by
    assert bad.stop_condition == "provider_error" and "500" in bad.errors[-1].message
    bad = no_customer.traces[0]
    assert not no_customer.ok and bad.stop_condition == "task_error" and bad.rewards == {}
    assert bad.info["airline"]["termination_reason"] == "user_error"
    assert len(model.requests) == 2  # the episode without a customer never asked the model


def test_limits_grade_the_episode_where_it_stopped():
    """verifiers' ``max_turns`` and rollout timeout stop an episode: it is graded (0), not lost."""
    lookup = {"name": "get_user_details", "arguments": {"user_id": "omar_rossi_1241"}}
    script = [Reply(tool_calls=[lookup]), Reply(tool_calls=[lookup]), Reply(fault="hang")]
    with OpenAIServer(script) as model:
        env = adapter.load_environment(
            task_ids=["17"], env={"agent": {"max_turns": 2, "timeout": {"rollout": 2.0}}}
        )
        capped, timed_out = play(env, model.base_url, rollouts=2)
    for episode, stop in ((capped, "max_turns"), (timed_out, "agent_timeout")):
        trace = episode.traces[0]
        assert trace.ok and trace.stop_condition == stop
        assert trace.reward == 0.0 and trace.rewards["grade"].score == 0.0
        assert trace.info["airline"]["termination_reason"] == "agent_error"
        assert trace.metrics["terminated_agent_error"] == 1.0
    assert capped.traces[0].metrics["tool_calls"] == 2  # the third call was refused
    assert len(model.requests) == 3


def play(env: Any, base_url: str, rollouts: int) -> list[Any]:
    """``rollouts`` episodes of the env's first task, one after the other, through verifiers'
    rollout path (``env.run_slot``)."""
    from verifiers.v1.env import RunSlot

    (task,) = list(env.taskset)
    client = vf.EvalClientConfig(base_url=base_url, api_key_var="UNSET_KEY")
    ctx = vf.ModelContext(model="policy", client=client)

    async def run() -> list[Any]:
        async with env.serving():
            return [await env.run_slot(RunSlot(task), ctx) for _ in range(rollouts)]

    return asyncio.run(run())


def test_vf_eval_command_line_resolves_the_plugin(tmp_path, monkeypatch):
    """The README's ``vf-eval`` line, parsed by verifiers' own CLI (``--dry-run`` writes the
    resolved config and stops): the taskset id finds this package's taskset, harness and env."""
    from verifiers.v1.cli.eval.main import main

    monkeypatch.setattr(sys, "argv", ["vf-eval"])  # main() rewrites sys.argv for its parser
    argv = [adapter.PLUGIN_ID, "-m", "MODEL", "--client.base-url", "http://127.0.0.1:9/v1"]
    argv += ["--env.taskset.split", "test", "--env.taskset.task.user", "llm"]
    argv += ["--env.taskset.benchmark", "tau3"]
    main([*argv, "-o", str(tmp_path), "--no-push", "--dry-run"])
    (saved,) = tmp_path.rglob("eval.json")
    env = json.loads(saved.read_text())["env"]
    assert env["taskset"]["id"] == adapter.PLUGIN_ID and env["taskset"]["split"] == "test"
    assert env["taskset"]["task"]["user"] == "llm" and env["taskset"]["benchmark"] == "tau3"
    assert env["agent"]["runtime"]["type"] == "subprocess"
    assert env["agent"]["harness"] is None  # the taskset's own: resolved to the airline harness
    assert vf.load_environment(vf.resolve_env_config(env)).config.agent_harnesses() == {
        "agent": vf.HarnessConfig(id=adapter.PLUGIN_ID)
    }


def test_taskset_lists_the_episodes_trl_rows_list():
    """One helper lists the episodes for both adapters: same task ids, same seeds, same order."""
    from airline_gym.integrations.trl import dataset_rows

    env = adapter.load_environment(split="test", repeats=2, seed=5)
    tasks = list(env.taskset)
    rows = dataset_rows(split="test", repeats=2, seed=5)
    assert len(tasks) == len(rows) == 40
    assert [(t.data.id, t.data.seed) for t in tasks] == [(r["task_id"], r["seed"]) for r in rows]
    assert len({t.key for t in tasks}) == 40  # verifiers needs unique task keys
    assert tasks[0].config.user == "scripted"  # offline by default


# --- benchmark versions ---------------------------------------------------------------------------
def test_tau3_taskset_plays_tau3_tasks_with_tau3_s_customer(tau3):
    import tau3_case as case
    from scripted_policy import as_reply

    replies = [as_reply(m) for m in case.gold_messages()]
    with case.customer_server() as customer, OpenAIServer(replies) as model:
        env = adapter.load_environment(
            benchmark="tau3", task_ids=[case.TASK], seed=6, task=case.customer_kwargs(customer)
        )
        (task,) = list(env.taskset)
        assert (task.data.id, task.data.seed, task.data.benchmark) == (case.TASK, 6, "tau3")
        (episode,) = play(env, model.base_url, rollouts=1)
    trace = episode.traces[0]
    assert trace.ok and trace.reward == case.check_grades_differ() == 1.0  # tau2 would grade 0.0
    assert trace.info["airline"]["benchmark"] == "tau3"
    assert trace.info["airline"]["termination_reason"] == "agent_stop"
    case.assert_tau3_customer(customer.requests)


def test_a_bad_benchmark_is_refused_as_the_env_refuses_it(tau3):
    from airline_gym.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        list(adapter.load_environment(benchmark="tau4", task_ids=["7"]).taskset)
    assert str(refused.value) == "benchmark must be one of tau2, tau3; got 'tau4'"
    with pytest.raises(ConfigError, match="task set 'tau2' belongs to benchmark 'tau2'"):
        list(adapter.load_environment(benchmark="tau3", tasks="tau2", task_ids=["7"]).taskset)
    tau2 = adapter.load_environment(task_ids=["7"])  # the default: tau2
    assert [t.data.benchmark for t in tau2.taskset] == ["tau2"]


def test_the_tool_reply_protocol_sends_its_tools_and_grades_the_episode(tau2_tasks):
    """``task.protocol = "tool-reply"``: the model is offered respond_to_user (and the
    protocol's system prompt), talks to the customer through it, and the grade is the env's."""
    from airline_gym.domain.tool_reply import INSTRUCTIONS

    calls = [
        {"name": "respond_to_user", "arguments": {"message": "Let me look into it."}},
        *[{"name": a.name, "arguments": a.arguments} for a in tau2_tasks["17"].actions],
        DONE_CALL,
    ]
    with OpenAIServer([Reply(tool_calls=[call]) for call in calls]) as model:
        env = adapter.load_environment(task_ids=["17"], task={"protocol": "tool-reply"})
        (episode,) = play(env, model.base_url, rollouts=1)
    first = model.requests[0]
    assert first["messages"][0]["content"].endswith(INSTRUCTIONS)
    assert "respond_to_user" in [t["function"]["name"] for t in first["tools"]]
    second = model.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "cabin" in second[-1]["content"]  # the reply
    trace = episode.traces[0]
    assert trace.ok and trace.reward == 1.0
    assert trace.info["airline"]["termination_reason"] == "agent_stop"
