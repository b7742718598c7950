"""The OpenEnv server (openenv-core's own) with OpenEnv's own client, on 127.0.0.1.

One ``airline-gym serve`` process per module; sessions are WebSocket connections of
``openenv.GenericEnvClient``. The load test plays 200 sessions at once and checks every grade
and every transcript against the same episode played in process.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

if os.environ.get("CI"):  # CI installs the extra: a missing library must fail, not skip
    import openenv

else:
    openenv = pytest.importorskip("openenv")


from openenv import GenericEnvClient

from airline_gym.agents import GoldAgent, NoOpAgent
from airline_gym.cli.main import main as cli_main
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.harness.runner import run_episode
from airline_gym.integrations.openenv import AirlineOpenEnv

ENV_KWARGS = {"user": "scripted", "max_steps": 60}
SESSIONS = 200


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``airline-gym serve`` (openenv-core's app under uvicorn) in its own process.

    Its output goes to a file: an unread pipe would fill up and stall the server.
    """
    port = free_port()
    command = [sys.executable, "-m", "airline_gym.cli", "serve", "--port", str(port)]
    command += ["--max-sessions", str(SESSIONS + 8), "--max-steps", str(ENV_KWARGS["max_steps"])]
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                ok = time.monotonic() < deadline and proc.poll() is None
                assert ok, f"server did not start: {log.read_text()}"
                time.sleep(0.2)
        assert log.read_text().startswith("serving airline-gym (OpenEnv) on ")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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


def test_200_concurrent_sessions_are_isolated_and_graded_as_in_process(server, tau2_tasks):
    ids = [t.id for t in tau2_tasks]
    jobs = [(ids[i % len(ids)], i) for i in range(SESSIONS)]

    async def main():
        # every session connects and plays at once: 200 live episodes on one server
        start = time.perf_counter()
        runs = [play(server, t, s, agent_for(i, tau2_tasks)) for i, (t, s) in enumerate(jobs)]
        results = await asyncio.wait_for(asyncio.gather(*runs), timeout=600)
        return results, time.perf_counter() - start

    results, seconds = asyncio.run(main())
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


def test_sessions_share_no_env():
    first, second = AirlineOpenEnv(**ENV_KWARGS), AirlineOpenEnv(**ENV_KWARGS)
    first.reset(task="17", seed=0)
    second.reset(task="3", seed=0)
    assert first.env is not second.env and first.state.task_id == "17"
    assert second.state.task_id == "3" and AirlineOpenEnv.SUPPORTS_CONCURRENT_SESSIONS


def test_serve_command_reports_bad_settings_in_one_line(capsys):
    assert cli_main(["serve", "--max-sessions", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "airline-gym serve: error: --max-sessions must be at least 1"
    )
    assert cli_main(["serve", "--tasks", "/nonexistent/tasks.json"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
