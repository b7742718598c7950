"""LLM faults, end to end over real HTTP on 127.0.0.1: the customer LLM through the env, and the
model agent (``airline_gym.agents.LiteLLMAgent``).

Every scenario must end within a bound computed from its settings:
``(max_retries + 1) * (timeout + overhead) + max_retries * backoff_cap + slack``. Nothing may
wait without a timeout: a fault either heals within the retries or ends the episode with a clear
cause (customer: ``user_error``, truncated; agent: ``AgentError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401  (registers the envs)
from airline_gym import agents
from airline_gym.agents import DONE, text_message, tool_call_message
from airline_gym.llm import LiteLLMChatModel, LLMError, _litellm
from airline_gym.testing.openai_server import OpenAIServer, Reply
from airline_gym.testing.raw_http_server import RawServer
from tests.robustness.cancel_mid_reply import cancel_mid_reply

TIMEOUT = 0.5
RETRIES = 2
BACKOFF_CAP = 0.2
OVERHEAD = 1.0  # per request: litellm + HTTP on a loaded 2-core machine
SLACK = 3.0
LIMIT = (RETRIES + 1) * (TIMEOUT + OVERHEAD) + RETRIES * BACKOFF_CAP + SLACK
LLM_ARGS = {"timeout": TIMEOUT, "max_retries": RETRIES, "backoff": 0.01, "backoff_cap": BACKOFF_CAP}

# fault name -> (scripted reply, words the cause must contain)
FAULTS: dict[str, tuple[Reply, str]] = {
    "timeout": (Reply(fault="hang", hang_seconds=10), "timeout"),
    "429": (Reply(fault="429", retry_after="0.05"), "HTTP 429"),
    "500": (Reply(fault="500"), "HTTP 500"),
    "503": (Reply(fault="503"), "HTTP 503"),
    "empty": (Reply(fault="empty"), "empty reply"),
    "whitespace": (Reply(content="  \n "), "empty reply"),
    "drop": (Reply(fault="drop"), "connection error"),
    "garbage": (Reply(fault="garbage"), "unparseable response body"),
}
LiteLLMAgent = getattr(agents, "LiteLLMAgent", None)
needs_agent = pytest.mark.skipif(LiteLLMAgent is None, reason="airline_gym.agents.LiteLLMAgent")


@pytest.fixture(scope="module", autouse=True)
def _warm_litellm() -> None:
    """Import litellm once, outside the timed sections."""
    _litellm()


@contextlib.contextmanager
def timed(limit: float = LIMIT) -> Iterator[None]:
    start = time.perf_counter()
    yield
    elapsed = time.perf_counter() - start
    assert elapsed < limit, f"took {elapsed:.2f} s, bound {limit:.2f} s"


def customer_env(server: OpenAIServer, **overrides: Any) -> gym.Env:
    args = {"api_base": server.base_url, "api_key": "sk-test", **LLM_ARGS, **overrides}
    return gym.make("Airline-v0", task=17, user_model="openai/customer", user_llm_args=args)


def make_agent(server: OpenAIServer, **llm_args: Any) -> Any:
    assert LiteLLMAgent is not None
    extra = {"backoff": 0.01, "backoff_cap": BACKOFF_CAP, **llm_args}
    return LiteLLMAgent(
        "openai/agent",
        api_base=server.base_url,
        api_key="sk-test",
        timeout=TIMEOUT,
        max_retries=RETRIES,
        llm_args=extra,
    )


# --- the customer LLM, through the env -----------------------------------------------------------
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_customer_fault_at_reset_ends_with_user_error(fault: str) -> None:
    reply, cause = FAULTS[fault]
    with OpenAIServer(default=reply) as server:
        env = customer_env(server)
        with timed():
            obs, info = env.reset(seed=0)
        assert obs == [] and info["termination_reason"] == "user_error"
        assert cause in info["error"] and "user simulator" in info["error"]
        assert f"after {RETRIES + 1} attempts" in info["error"]
        assert len(info["error"]) < 1_000  # one line, detail truncated
        assert len(server.requests) == RETRIES + 1
        obs, reward, terminated, truncated, info = env.step(DONE)
        assert (obs, reward, terminated, truncated) == ([], 0.0, False, True)


@pytest.mark.parametrize("fault", ["timeout", "429", "drop", "garbage"])
def test_customer_fault_mid_episode_truncates_with_the_cause(fault: str) -> None:
    reply, cause = FAULTS[fault]
    with OpenAIServer([Reply("Hi, I'm omar_rossi_1241.")], default=reply) as server:
        env = customer_env(server)
        env.reset(seed=0)
        env.step(tool_call_message("get_user_details", {"user_id": "omar_rossi_1241"}, "t"))
        with timed():
            obs, reward, terminated, truncated, info = env.step(text_message("How can I help?"))
    assert (obs, reward, terminated, truncated) == ([], 0.0, False, True)
    assert info["termination_reason"] == "user_error" and cause in info["error"]
    assert info["reward_info"]["reward"] == 0.0
    assert "terminated prematurely" in info["reward_info"]["note"]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_customer_fault_heals_within_the_retries(fault: str) -> None:
    reply, _ = FAULTS[fault]
    script = [reply, reply, Reply("Hi, I'm omar_rossi_1241."), Reply("Thanks! ###STOP###")]
    with OpenAIServer(script) as server:
        env = customer_env(server)
        with timed():
            obs, info = env.reset(seed=0)
        assert obs == [{"role": "user", "content": "Hi, I'm omar_rossi_1241."}]
        obs, reward, terminated, truncated, info = env.step(text_message("Anything else?"))
    assert (terminated, truncated, info["termination_reason"]) == (True, False, "user_stop")
    assert len(server.requests) == 4


def test_customer_retry_after_is_honoured_but_capped() -> None:
    """A 429 asking for an hour waits ``backoff_cap`` seconds, not an hour."""
    script = [Reply(fault="429", retry_after="3600")] * 2 + [Reply("Hello ###STOP###")]
    with OpenAIServer(script) as server:
        env = customer_env(server)
        start = time.perf_counter()
        with timed():
            _obs, info = env.reset(seed=0)
        assert time.perf_counter() - start >= 2 * BACKOFF_CAP
    assert info["termination_reason"] == "user_stop"
    date = "Wed, 21 Oct 2015 07:28:00 GMT"  # an HTTP date in the past: no wait at all
    script = [Reply(fault="429", retry_after=date), Reply("ok ###STOP###")]
    with OpenAIServer(script) as server, timed(OVERHEAD * 2 + SLACK):
        _obs, info = customer_env(server, backoff=10.0).reset(seed=0)
    assert info["termination_reason"] == "user_stop"


@pytest.mark.parametrize("fault", ["timeout", "500", "drop"])
def test_customer_fault_on_the_async_path_is_bounded(fault: str) -> None:
    reply, cause = FAULTS[fault]

    async def play() -> dict[str, Any]:
        with OpenAIServer([Reply("Hi.")], default=reply) as server:
            env = customer_env(server).unwrapped
            await env.areset(seed=0)
            *_, info = await env.astep(text_message("How can I help?"))
            return info

    with timed():
        info = asyncio.run(play())
    assert info["termination_reason"] == "user_error" and cause in info["error"]


def test_many_customers_failing_at_once_stay_bounded() -> None:
    """Twenty episodes whose customer hangs, concurrently: still one timeout budget, not 20."""

    async def play() -> list[dict[str, Any]]:
        with OpenAIServer(default=FAULTS["timeout"][0]) as server:
            envs = [customer_env(server).unwrapped for _ in range(20)]
            results = await asyncio.gather(*(e.areset(seed=i) for i, e in enumerate(envs)))
            return [info for _obs, info in results]

    with timed(LIMIT + 5):
        infos = asyncio.run(play())
    assert all(i["termination_reason"] == "user_error" for i in infos)


def _sockets() -> int:
    """Open sockets of this process (its file descriptors that are sockets)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.parametrize("path", ["blocking", "async", "litellm-blocking"])
def test_requests_given_up_on_leave_no_thread_or_socket(path: str) -> None:
    """15 episodes against a server that drips bytes: each timed-out request is closed.

    The drip is fast, so the timeout lands in a turn of the loop where a read has just finished:
    with ``asyncio.wait_for`` around each read, that lost the timeout's own cancellation and the
    request read on until the drip ended ("server closed the connection before a full reply").
    """
    drip = Reply(fault="drip", hang_seconds=20, drip_interval=0.0005)
    args = {"timeout": 0.3, "max_retries": 0, "fast_path": not path.startswith("litellm")}
    with OpenAIServer(default=drip) as server:
        envs = [customer_env(server, **args).unwrapped for _ in range(15)]
        envs[0].reset(seed=0)  # the first episode starts the pools and the shared loop
        threads, sockets = threading.active_count(), _sockets()
        if path.endswith("blocking"):
            infos = [env.reset(seed=i)[1] for i, env in enumerate(envs)]
        else:

            async def play() -> list[dict[str, Any]]:
                done = await asyncio.gather(*(e.areset(seed=i) for i, e in enumerate(envs)))
                return [info for _obs, info in done]

            infos = asyncio.run(play())
        assert all(i["termination_reason"] == "user_error" for i in infos)
        assert all("timeout" in i["error"] for i in infos)
        time.sleep(0.5)  # the server notices closed connections at its next drip (0.1 s)
        assert threading.active_count() <= threads
        assert _sockets() <= sockets
        assert len(server.requests) == 16


def test_a_request_cancelled_while_its_reply_streams_in_stops_at_once() -> None:
    """Cancelled while reply bytes arrive, each request ends with CancelledError, not later.

    With ``asyncio.wait_for`` around each read, Python 3.11 dropped a cancellation that landed in
    the turn of the loop where a read finished: the request read on until its deadline. At one
    byte per half millisecond most turns finish a read (40 of 40 cancellations were lost).
    """
    ends = cancel_mid_reply(40)
    assert [outcome for outcome, _ in ends] == ["cancelled"] * 40
    assert max(seconds for _, seconds in ends) < 5  # the drip lasts 8 s, the timeout 60 s


# --- the model agent -----------------------------------------------------------------------------
@needs_agent
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_agent_fault_raises_agent_error_with_the_cause(fault: str) -> None:
    reply, cause = FAULTS[fault]
    env = gym.make("AirlineScripted-v0", task=17)
    _obs, info = env.reset(seed=0)
    with OpenAIServer(default=reply) as server:
        agent = make_agent(server)
        agent.reset(info)
        with timed(), pytest.raises(agents.AgentError) as error:
            agent.act([], info)
    assert cause in error.value.cause and "agent LLM" in error.value.cause
    assert len(server.requests) == RETRIES + 1
    assert len(error.value.cause) < 1_000


@needs_agent
@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"user_id": ', "not valid JSON"),
        ("[1, 2]", "JSON list, not an object"),
        ('"omar_rossi_1241"', "JSON str, not an object"),
        ("{'user_id': 'x'}", "not valid JSON"),
        ('{"user_id": NaN', "not valid JSON"),
    ],
)
def test_agent_malformed_tool_call_json_is_retried_then_fails(arguments: str, problem: str) -> None:
    bad = Reply(tool_calls=[{"name": "get_user_details", "arguments": arguments}])
    env = gym.make("AirlineScripted-v0", task=17)
    _obs, info = env.reset(seed=0)
    with OpenAIServer(default=bad) as server:
        agent = make_agent(server)
        agent.reset(info)
        with timed(), pytest.raises(agents.AgentError) as error:
            agent.act([], info)
    assert problem in error.value.cause and len(server.requests) == RETRIES + 1


@needs_agent
@pytest.mark.parametrize("fault", [*sorted(FAULTS), "bad_json"])
def test_agent_fault_heals_and_the_action_runs(fault: str) -> None:
    reply = FAULTS[fault][0] if fault in FAULTS else Reply(fault="bad_json")
    good = Reply(
        tool_calls=[{"name": "get_user_details", "arguments": {"user_id": "omar_rossi_1241"}}]
    )
    env = gym.make("AirlineScripted-v0", task=17)
    _obs, info = env.reset(seed=0)
    with OpenAIServer([reply, good]) as server:
        agent = make_agent(server)
        agent.reset(info)
        with timed():
            action = agent.act([], info)
    obs, *_ = env.step(action)
    assert obs[0]["role"] == "tool" and '"user_id": "omar_rossi_1241"' in obs[0]["content"]
    assert agent.calls == 1


@needs_agent
@pytest.mark.parametrize("fault", ["timeout", "500", "garbage"])
def test_agent_fault_on_the_async_path_is_bounded(fault: str) -> None:
    reply, cause = FAULTS[fault]

    async def play() -> str:
        with OpenAIServer(default=reply) as server:
            agent = make_agent(server)
            try:
                await agent.aact([], {"messages": [{"role": "user", "content": "hi"}], "tools": []})
            except agents.AgentError as exc:
                return exc.cause
        return "no error"

    with timed():
        assert cause in asyncio.run(play())


@needs_agent
def test_agent_and_customer_both_flaky_episode_still_completes() -> None:
    """Both LLMs fail once per turn; every fault heals; the episode ends with user_stop."""
    lookup = Reply(
        tool_calls=[{"name": "get_user_details", "arguments": {"user_id": "omar_rossi_1241"}}]
    )
    agent_script = [
        Reply(fault="500"),
        lookup,
        Reply(fault="bad_json"),
        Reply("I found your account. Anything else?"),
    ]
    customer_script = [
        Reply(fault="drop"),
        Reply("Hi, I'm omar_rossi_1241."),
        Reply(fault="429", retry_after="0.05"),
        Reply("No, thanks. ###STOP###"),
    ]
    with OpenAIServer(agent_script) as agent_server, OpenAIServer(customer_script) as customer:
        env = customer_env(customer)
        agent = make_agent(agent_server)
        with timed(2 * LIMIT):
            obs, info = env.reset(seed=0)
            agent.reset(info)
            done = False
            while not done:
                obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
                done = terminated or truncated
    assert info["termination_reason"] == "user_stop" and not truncated
    assert len(agent_server.requests) == 4 and len(customer.requests) == 4


# --- faults the scripted server cannot make: a raw socket server ---------------------------------
def _model(base_url: str, retries: int = 1) -> LiteLLMChatModel:
    return LiteLLMChatModel(
        "openai/raw", api_base=base_url, api_key="k", **{**LLM_ARGS, "max_retries": retries}
    )


def test_huge_garbage_body_gives_a_short_cause() -> None:
    body = b"<html>" + b"\x00garbage " * 500_000

    def handle(conn: socket.socket) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
        conn.sendall(head.encode() + b"\r\n\r\n" + body)

    with RawServer(handle) as server, timed(), pytest.raises(LLMError) as error:
        _model(server.base_url).complete([{"role": "user", "content": "hi"}])
    assert len(error.value.cause) < 600 and server.connections == 2


def test_headers_then_silence_times_out() -> None:
    def handle(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n"
        )
        time.sleep(5)

    with RawServer(handle) as server, timed(), pytest.raises(LLMError, match="timeout"):
        _model(server.base_url).complete([{"role": "user", "content": "hi"}])


def test_a_server_dripping_bytes_cannot_hold_a_call_beyond_its_timeout() -> None:
    def handle(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9999\r\n\r\n"
        )
        end = time.monotonic() + 4
        while time.monotonic() < end:
            conn.sendall(b" ")
            time.sleep(0.2)

    model = _model("", retries=0)
    bound = (model.max_retries + 1) * (TIMEOUT + OVERHEAD) + model.backoff_cap + 1.0
    with RawServer(handle) as server:
        model.api_base = server.base_url
        with timed(bound), pytest.raises(LLMError):
            model.complete([{"role": "user", "content": "hi"}])
