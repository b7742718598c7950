"""Many episodes in flight in one process: does a ready request wait for the event loop?

``episodes`` episodes run at once on the async runner
(:func:`~airline_gym.harness.runner.arun_episodes`), LLM agent and LLM customer both on the
scripted server (:mod:`~airline_gym.testing.bench_script`), which takes ``latency`` seconds per
reply (a model decoding a batch), each reply's delay drawn uniformly from
``latency * [1 - jitter, 1 + jitter]`` (seeded) so that replies do not come back in
lock-step waves. Measured in the harness process, on its own clock:

- **ready -> sent**: from the moment an episode asks its model (``acomplete`` is entered, the
  request is ready) to the moment its bytes are handed to the socket
  (:data:`airline_gym.llm.http11.SENT_HOOKS`): JSON encoding, the HTTP client, connecting, and
  every loop turn the request waits behind other work; also over the requests that found their
  connection open (each episode's first request opens one: the start-up burst's cost);
- **reply -> next request**: from the server writing a reply to the same episode's next request
  arriving (the server's clock, which is the same monotonic clock on Linux): reading the reply,
  the env step, the next request: what an episode waits for the harness per turn;
- the event loop's lag (how late a 10 ms timer fires), requests per second, CPU per request,
  and whether the rewards equal a sequential run's and every episode saw only its own messages.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from airline_gym.llm import ChatReply, LiteLLMChatModel
from airline_gym.testing.bench_script import REF, TASK_IDS, ServerProcess

__all__ = ["LATENCY", "InFlight", "run_in_flight"]

LATENCY = 2.0  # seconds per reply: a model decoding a batch
JITTER = 0.5  # each reply's delay is latency * uniform(1 - jitter, 1 + jitter)

_ready: contextvars.ContextVar[float | None] = contextvars.ContextVar("ready", default=None)


class TimedChatModel(LiteLLMChatModel):
    """A chat model that notes when each request is ready (for :func:`run_in_flight`)."""

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        _ready.set(time.monotonic())
        return await super().acomplete(messages, tools)


def _timed(model: LiteLLMChatModel) -> LiteLLMChatModel:
    timed = copy.copy(model)
    timed.__class__ = TimedChatModel  # same fields, no state of its own
    return timed


@dataclass
class InFlight:
    """What ``episodes`` episodes at once in one process measured."""

    episodes: int
    latency: float
    jitter: float
    wall: float
    requests: int
    ready_to_sent_p50: float
    ready_to_sent_p99: float
    ready_to_sent_max: float
    reused_p99: float
    turnaround_p50: float
    turnaround_p99: float
    loop_lag_p99: float
    loop_lag_max: float
    rewards_match: bool
    isolated: bool
    cpu_per_request: float
    timed_requests: int = 0


def _send_clock(waits: list[float], reused: list[float]) -> Callable[[bool], None]:
    """A hook appending, per request, the time from ready to its bytes written to ``waits``
    (and to ``reused`` when it went on a connection already open)."""

    def sent(new_connection: bool) -> None:
        ready = _ready.get()
        if ready is not None:
            waits.append(time.monotonic() - ready)
            if not new_connection:
                reused.append(waits[-1])

    return sent


async def _with_lag_probe(work: Any, lags: list[float], every: float = 0.01) -> Any:
    """Await ``work`` while sampling how late a 10 ms timer fires (the event loop's stalls)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    while not task.done():
        due = loop.time() + every
        await asyncio.wait({task}, timeout=every)
        lags.append(max(0.0, loop.time() - due))
    return task.result()


def run_in_flight(
    episodes: int = 1000, latency: float = LATENCY, jitter: float = JITTER
) -> InFlight:
    """Our async runner with ``episodes`` episodes in flight against the scripted server."""
    from airline_gym.agents import LiteLLMAgent
    from airline_gym.env import AirlineEnv
    from airline_gym.harness.runner import arun_episodes, run_episode
    from airline_gym.llm import http11

    with ServerProcess(latency=latency, jitter=jitter) as server:
        url = server.base_url

        def make_env() -> Any:
            env = AirlineEnv(
                user="llm", user_model="openai/customer", user_llm_args={"api_base": url}
            )
            env.user._base = _timed(env.user._base)  # type: ignore[attr-defined]
            return env

        def make_agent() -> Any:
            agent = LiteLLMAgent("openai/agent", api_base=url)
            agent.chat_model = _timed(agent.chat_model)
            return agent

        expected = {t: run_episode(make_env(), make_agent(), t, 0).reward for t in TASK_IDS}
        before = server.call("GET", "/_stats")["requests"]
        server.call("POST", "/_responder", {})
        jobs = [(TASK_IDS[i % len(TASK_IDS)], i) for i in range(episodes)]
        waits: list[float] = []
        reused: list[float] = []
        lags: list[float] = []
        http11.SENT_HOOKS.append(_send_clock(waits, reused))
        try:
            cpu, start = time.process_time(), time.monotonic()
            work = arun_episodes(make_env, make_agent, jobs, concurrency=episodes)
            results = asyncio.run(_with_lag_probe(work, lags))
            wall, cpu = time.monotonic() - start, time.process_time() - cpu
        finally:
            http11.SENT_HOOKS.pop()
        stats = server.call("GET", "/_stats")
        turnaround = server.call("GET", "/_responder")["turnaround"]
    requests = stats["requests"] - before
    rewards_match = all(r.reward == expected[r.task_id] for r in results)
    return InFlight(
        episodes=len(results),
        latency=latency,
        jitter=jitter,
        wall=wall,
        requests=requests,
        ready_to_sent_p50=_quantile(waits, 50),
        ready_to_sent_p99=_quantile(waits, 99),
        ready_to_sent_max=max(waits, default=float("nan")),
        reused_p99=_quantile(reused, 99),
        turnaround_p50=_quantile(turnaround, 50),
        turnaround_p99=_quantile(turnaround, 99),
        loop_lag_p99=_quantile(lags, 99),
        loop_lag_max=max(lags, default=float("nan")),
        rewards_match=rewards_match and len(results) == episodes,
        isolated=all(_own_ref(r.messages, r.task_id) for r in results),
        cpu_per_request=cpu / max(1, requests),
        timed_requests=len(waits),
    )


def _quantile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _own_ref(messages: list[dict[str, Any]], task_id: str) -> bool:
    refs = {m for msg in messages for m in REF.findall(str(msg.get("content") or ""))}
    return len({ref for ref, _n in refs}) == 1 and {ref for ref, _ in refs} == {task_id}
