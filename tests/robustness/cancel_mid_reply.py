"""Cancel LLM requests while their replies stream in; how each one ended and how long it took.

Used in-process by ``test_llm_faults.py`` and run as a script by ``test_oldest_python.py`` in the
oldest Python we support, whose time limits come from a backport (``python cancel_mid_reply.py``
prints the outcomes as JSON).
"""

from __future__ import annotations

import asyncio
import json
import time

from airline_gym.llm import LiteLLMChatModel
from airline_gym.testing.openai_server import OpenAIServer, Reply

#: A reply that never ends in time: its headers, then a body byte every half millisecond for 8 s.
DRIP = Reply(fault="drip", hang_seconds=8, drip_interval=0.0005)


async def _cancel_one(model: LiteLLMChatModel) -> tuple[str, float]:
    request = asyncio.create_task(model.acomplete([{"role": "user", "content": "hello"}]))
    await asyncio.sleep(0.5)  # the headers are in; the body drips
    request.cancel()
    start = time.monotonic()
    try:
        await request
    except asyncio.CancelledError:
        return "cancelled", time.monotonic() - start
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}", time.monotonic() - start
    return "returned", time.monotonic() - start


def cancel_mid_reply(count: int = 40) -> list[tuple[str, float]]:
    """(outcome, seconds from cancel to end) of ``count`` requests cancelled mid-reply."""

    async def play(server: OpenAIServer) -> list[tuple[str, float]]:
        model = LiteLLMChatModel("openai/m", server.base_url, "sk-test", timeout=60, max_retries=0)
        return list(await asyncio.gather(*(_cancel_one(model) for _ in range(count))))

    with OpenAIServer(default=DRIP) as server:
        return asyncio.run(play(server))


if __name__ == "__main__":
    print(json.dumps(cancel_mid_reply()))
