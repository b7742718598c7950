"""The OpenEnv server (openenv-core's own) with OpenEnv's own client, on 127.0.0.1.

One server per module: ``airline-gym serve``'s own ``uvicorn.Server`` (``cli.serve.make_server``,
from the CLI's parsed arguments) in a thread of this process, so the module pays openenv-core's
import once. Sessions are WebSocket connections of ``openenv.GenericEnvClient``. The load test
plays 200 sessions at once and checks every grade and transcript against the same episode played
in process, and that every session's env is closed when its client leaves.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import time
from pathlib import Path

import pytest

from airline_gym.cli import serve


def import_openenv_client():
    """``openenv.GenericEnvClient``, imported as ``airline-gym serve`` imports openenv-core.

    That is without gradio (``serve.without_module``): openenv-core's server package imports it
    for a web UI nobody uses here, two thirds of this module's import time.
    """
    with serve.without_module("gradio"):
        if os.environ.get("CI"):  # CI installs the extra: a missing library must fail, not skip
            from openenv import GenericEnvClient
        else:
            pytest.importorskip("openenv.core")
            from openenv import GenericEnvClient
    return GenericEnvClient


GenericEnvClient = import_openenv_client()

from airline_gym.agents import GoldAgent, NoOpAgent  # noqa: E402
from airline_gym.cli.main import main as cli_main  # noqa: E402
from airline_gym.env.airline_env import AirlineEnv  # noqa: E402
from airline_gym.harness.runner import run_episode  # noqa: E402
from airline_gym.integrations.openenv import AirlineOpenEnv  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from openenv_servers import LoggedErrors, running_server  # noqa: E402
from readme_examples import readme_example, run_example  # noqa: E402

ENV_KWARGS = {"user": "scripted", "max_steps": 60}
SESSIONS = 200


class Sessions:
    """Counts the server's session envs built and closed (a spy on AirlineOpenEnv)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened = self.closed = 0
        init, close = AirlineOpenEnv.__init__, AirlineOpenEnv.close

        def counted_init(env, **kwargs):
            init(env, **kwargs)
            self.opened += 1

        def counted_close(env):
            close(env)
            self.closed += 1

        monkeypatch.setattr(AirlineOpenEnv, "__init__", counted_init)
        monkeypatch.setattr(AirlineOpenEnv, "close", counted_close)

    def wait_all_closed(self, seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while self.closed < self.opened and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture(scope="module")
def sessions():
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield Sessions(monkeypatch)


@pytest.fixture(scope="module")
def server(sessions):
    """``airline-gym serve --port 0`` (any free port) running in a thread; yields its URL."""
    options = ["--max-sessions", str(SESSIONS + 8), "--max-steps", str(ENV_KWARGS["max_steps"])]
    with running_server(*options) as url:
        yield url


def agent_for(i: int, tasks):
    """Job i's agent: the gold solution, or for every third one that ends at once."""
    return NoOpAgent() if i % 3 == 0 else GoldAgent(tasks)


async def play(url, task_id, seed, agent, client=None) -> tuple[float, dict, dict]:
    """One episode over the wire: the agent acts on what the server returned."""
    if client is None:
        client = GenericEnvClient(base_url=url, connect_timeout_s=120, message_timeout_s=120)
    async with client:
        result = await client.reset(task=task_id, seed=seed)
        observation, info = result.observation["messages"], result.observation["info"]
        agent.reset(info)
        total = 0.0
        while not result.done:
            action = agent.act(observation, info)
            result = await client.step({"message": action})
            observation, info = result.observation["messages"], result.observation["info"]
            total += result.reward or 0.0
        state = await client.state()
    return total, info, state


def local(task_id: str, seed: int, agent):
    return run_episode(AirlineEnv(**ENV_KWARGS), agent, task_id, seed)


def test_reset_step_state_match_the_python_env(server, tau2_tasks):
    async def main():
        async with GenericEnvClient(base_url=server) as client:
            result = await client.reset(task="17", seed=3)
            env = AirlineEnv(**ENV_KWARGS)
            observation, info = env.reset(seed=3, options={"task": "17"})
            assert result.observation["messages"] == observation
            assert result.observation["info"] == info and result.done is False
            bad = await client.step({"message": {"role": "assistant", "tool_calls": "nope"}})
            expected = env.step({"role": "assistant", "tool_calls": "nope"})
            assert bad.observation["messages"] == expected[0]  # an error observation
            assert bad.observation["messages"][0]["content"].startswith("Error")
            done = await client.step({"message": {"name": "done", "arguments": {}}})
            expected = env.step({"name": "done", "arguments": {}})
            assert done.observation["messages"] == expected[0] and done.reward == expected[1]
            assert done.done and done.observation["terminated"] is True
            assert done.observation["info"]["reward_info"] == expected[4]["reward_info"]
            state = await client.state()
            assert state["task_id"] == "17" and state["termination_reason"] == "agent_stop"
            assert state["step_count"] == expected[4]["step_count"] and state["done"] is True

    asyncio.run(main())


def test_one_episode_equals_the_in_process_episode(server, tau2_tasks):
    reward, info, state = asyncio.run(play(server, "17", 0, GoldAgent(tau2_tasks)))
    expected = local("17", 0, GoldAgent(tau2_tasks))
    assert reward == expected.reward == 1.0
    assert info["messages"] == expected.messages and state["step_count"] == expected.steps


@pytest.mark.long  # ~10 s
def test_200_concurrent_sessions_are_isolated_and_graded_as_in_process(
    server, sessions, tau2_tasks
):
    ids = [t.id for t in tau2_tasks]
    jobs = [(ids[i % len(ids)], i) for i in range(SESSIONS)]
    sessions.wait_all_closed()  # the earlier tests' sessions
    opened, closed = sessions.opened, sessions.closed

    async def main():
        # every session connects and plays at once: 200 live episodes on one server
        start = time.perf_counter()
        runs = [play(server, t, s, agent_for(i, tau2_tasks)) for i, (t, s) in enumerate(jobs)]
        results = await asyncio.wait_for(asyncio.gather(*runs), timeout=600)
        return results, time.perf_counter() - start

    with LoggedErrors() as errors, LoggedErrors("airline_gym") as ours:
        results, seconds = asyncio.run(main())
        sessions.wait_all_closed()
    # 200 clients left normally: nothing in the server's log
    assert errors.records == ours.records == []
    # one env per session, each closed when its client left: nothing leaks or lingers
    assert (sessions.opened - opened, sessions.closed - closed) == (SESSIONS, SESSIONS)
    steps = 0
    for i, ((task_id, seed), (reward, info, state)) in enumerate(zip(jobs, results, strict=True)):
        expected = local(task_id, seed, agent_for(i, tau2_tasks))
        assert reward == expected.reward, (task_id, seed)
        assert info["messages"] == expected.messages  # no message from another session
        assert state["task_id"] == task_id and state["step_count"] == expected.steps
        steps += expected.steps
    rewards = [r for r, _, _ in results]
    assert 0 < sum(rewards) < len(rewards)  # gold passes; quitting passes 19 of 50 tasks
    rate = steps / seconds
    print(f"\n{SESSIONS} sessions, {steps} steps in {seconds:.1f} s ({rate:.0f} steps/s)")


def test_readme_example_runs_against_the_server(server, capsys):
    code = readme_example("openenv")
    assert code.count("http://127.0.0.1:8000") == 1  # the one thing the test changes
    run_example("openenv", {"__name__": "readme"}, code.replace("http://127.0.0.1:8000", server))
    assert capsys.readouterr().out == "1.0\n"  # task 17's gold solution, over the wire


def test_sessions_share_no_env():
    first, second = AirlineOpenEnv(**ENV_KWARGS), AirlineOpenEnv(**ENV_KWARGS)
    first.reset(task="17", seed=0)
    second.reset(task="3", seed=0)
    assert first.env is not second.env and first.state.task_id == "17"
    assert second.state.task_id == "3" and AirlineOpenEnv.SUPPORTS_CONCURRENT_SESSIONS
    first.close()
    second.close()


def test_serve_command_reports_bad_settings_in_one_line(capsys):
    assert cli_main(["serve", "--max-sessions", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "airline-gym serve: error: --max-sessions must be at least 1"
    )
    assert cli_main(["serve", "--tasks", "/nonexistent/tasks.json"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_without_module_hides_a_library_only_inside(monkeypatch):
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    with serve.without_module("colorsys"), pytest.raises(ImportError):
        importlib.import_module("colorsys")
    module = importlib.import_module("colorsys")  # importable again after
    with serve.without_module("colorsys"):  # already imported: left alone
        assert importlib.import_module("colorsys") is module


# --- benchmark versions ---------------------------------------------------------------------------
def test_a_tau3_server_plays_tau3_tasks_with_tau3_s_customer(tau3, monkeypatch):
    """``airline-gym serve --benchmark tau3``: the task played, the customer's guidelines and the
    grade are tau3's; a reset naming the other version is refused and the episode kept."""
    import tau3_case as case

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    async def main(url: str) -> tuple[object, dict, str]:
        async with GenericEnvClient(base_url=url, message_timeout_s=120) as client:
            result = await client.reset(task=case.TASK, seed=0, benchmark="tau3")
            assert result.observation["messages"][-1]["content"] == case.OPENER
            for message in case.gold_messages():
                result = await client.step({"message": message})
            with pytest.raises(Exception) as refused:
                await client.reset(task=case.TASK, benchmark="tau2")
            return result, await client.state(), str(refused.value)

    with case.customer_server() as customer:
        options = ["--benchmark", "tau3", "--user-model", "openai/customer"]
        with running_server(*options, "--user-api-base", customer.base_url) as url:
            result, state, refusal = asyncio.run(main(url))
    assert result.done and result.reward == case.check_grades_differ() == 1.0  # tau2 would say 0.0
    assert state["benchmark"] == "tau3" and state["termination_reason"] == "agent_stop"
    assert "listed for benchmark 'tau2' but the env plays 'tau3'" in refusal
    assert state["task_id"] == case.TASK
    case.assert_tau3_customer(customer.requests)


def test_a_bad_benchmark_is_refused_as_the_env_refuses_it(capsys):
    from airline_gym.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        AirlineOpenEnv(user="scripted", benchmark="tau4")
    assert str(refused.value) == "benchmark must be one of tau2, tau3; got 'tau4'"
    env = AirlineOpenEnv(user="scripted")
    with pytest.raises(ConfigError) as refused:
        env.reset(task="7", benchmark="tau4")
    assert str(refused.value) == "benchmark must be one of tau2, tau3; got 'tau4'"
    assert env.state.benchmark == "tau2" and env.env.episode is None
    with pytest.raises(SystemExit) as exited:
        cli_main(["serve", "--benchmark", "tau4"])
    said = capsys.readouterr().err
    assert exited.value.code == 2 and said.count("\n") == 1
    assert "argument --benchmark: invalid choice: 'tau4'" in said


def test_the_served_protocol_is_the_serve_commands(tau2_tasks):
    """``airline-gym serve --protocol tool-reply``: every session's env plays TRL's protocol (its
    tools, the customer through respond_to_user); the gold episode still scores 1."""
    from airline_gym.cli.main import build_parser
    from airline_gym.integrations.openenv import AirlineAction

    args = build_parser().parse_args(["serve", "--protocol", "tool-reply"])
    kwargs = serve.env_kwargs(args)
    assert kwargs["protocol"] == "tool-reply"
    session = AirlineOpenEnv(**kwargs)
    session.reset(task="17", seed=0)
    names = [t["function"]["name"] for t in session.env.tools]
    assert "respond_to_user" in names
    said = {"name": "respond_to_user", "arguments": {"message": "How can I help?"}}
    seen = session.step(AirlineAction(message=said))
    assert [m["role"] for m in seen.messages] == ["tool"] and not seen.done
    for action in tau2_tasks["17"].actions:
        seen = session.step(
            AirlineAction(message={"name": action.name, "arguments": action.arguments})
        )
    seen = session.step(AirlineAction(message={"name": "done", "arguments": {}}))
    assert seen.done and seen.reward == 1.0
    session.close()
