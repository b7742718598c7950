"""The direct OpenAI-compatible path: the same request bodies as litellm, without litellm.

Each request is sent twice to one recording server on 127.0.0.1, once on the direct path and
once through litellm itself; the recorded bodies must be equal, key order included.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airline_gym.llm import LiteLLMChatModel, LLMError
from airline_gym.testing import OpenAIServer, Reply

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_user_details",
            "description": "Get user details.",
            "parameters": {
                "type": "object",
                "properties": {"user_id": {"type": "string", "description": "id"}},
                "required": ["user_id"],
            },
        },
    }
]
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_user_details", "arguments": '{"user_id": "mia_li_3668"}'},
}
HISTORY = [
    {"role": "system", "content": "You are an airline agent. Politique: ne rien inventer."},
    {"role": "assistant", "content": "Hi! How can I help you today?"},
    {"role": "user", "content": "Bonjour, j'ai réservé un vol ✈ (mia_li_3668)", "name": None},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"name": "Mia"}', "name": None},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Error: not found"},
    {"role": "assistant", "content": "Done.", "tool_calls": None, "refusal": None},
    {"role": "user", "content": "thanks"},
]
# (constructor settings, tools) per case
CASES: dict[str, tuple[dict[str, Any], list[dict[str, Any]] | None]] = {
    "plain": ({}, None),
    "tools": ({"tool_choice": "auto", "seed": 7}, TOOLS),
    "tools-no-choice": ({"temperature": 0.7}, TOOLS),
    "extras": (
        {
            "tool_choice": "required",
            "extra": {
                "max_tokens": 64,
                "top_p": 0.9,
                "stop": ["###STOP###"],
                "parallel_tool_calls": False,
                "presence_penalty": 0.1,
                "response_format": {"type": "text"},
                "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
            },
        },
        TOOLS,
    ),
}


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(default=Reply("ok")) as srv:
        yield srv


def model(server: OpenAIServer, fast: bool, **settings: Any) -> LiteLLMChatModel:
    return LiteLLMChatModel(
        "openai/my-local-model", api_base=server.base_url, fast_path=fast, **settings
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_direct_body_is_litellms(server: OpenAIServer, case: str) -> None:
    settings, tools = CASES[case]
    direct = model(server, True, **settings)
    assert direct.direct_body(HISTORY, tools) is not None  # really the direct path
    direct.complete(HISTORY, tools)  # blocking: http.client in this thread
    asyncio.run(direct.acomplete(HISTORY, tools))  # async: h11 on asyncio streams
    model(server, False, **settings).complete(HISTORY, tools)
    blocking, non_blocking, litellms = (json.dumps(body) for body in server.requests)
    assert blocking == non_blocking == litellms  # same keys, same order, same values


@pytest.mark.parametrize(
    ("name", "messages", "extra"),
    [
        ("openai/m", [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], {}),
        ("openai/m", [{"role": "developer", "content": "be brief"}], {}),
        ("openai/m", [{"role": "user", "content": "hi"}], {"user": "someone"}),
        ("openai/o3-mini", [{"role": "user", "content": "hi"}], {"max_tokens": 5}),
        ("hosted_vllm/m", [{"role": "user", "content": "hi"}], {}),
    ],
)
def test_what_litellm_rewrites_goes_through_litellm(
    server: OpenAIServer, name: str, messages: list[dict[str, Any]], extra: dict[str, Any]
) -> None:
    chat = LiteLLMChatModel(name, api_base=server.base_url, temperature=1.0, extra=extra)
    assert chat.direct_body(messages, None) is None
    assert chat.complete(messages).content == "ok"  # and it still works, via litellm


def test_cost_is_litellms(server: OpenAIServer) -> None:
    settings: dict[str, Any] = {"api_base": server.base_url, "api_key": "sk-test"}
    direct = LiteLLMChatModel("openai/gpt-4o-mini", **settings).complete(HISTORY)
    via_litellm = LiteLLMChatModel("openai/gpt-4o-mini", fast_path=False, **settings).complete(
        HISTORY
    )
    assert direct.cost is not None and via_litellm.cost is not None
    assert direct.cost == pytest.approx(via_litellm.cost, rel=1e-9)
    assert model(server, True).complete(HISTORY).cost is None  # unpriced name: no cost


def test_direct_path_does_not_import_litellm(server: OpenAIServer) -> None:
    code = (
        "import sys; from airline_gym.llm import LiteLLMChatModel as M; "
        f"r = M('openai/m', api_base={server.base_url!r}).complete("
        "[{'role': 'user', 'content': 'hi'}]); "
        "assert r.content == 'ok', r; assert 'litellm' not in sys.modules, 'litellm imported'"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=root)
    assert len(server.requests) == 1


def test_the_body_encoding_is_json_dumps_even_when_the_tools_change_in_place() -> None:
    """The tools' JSON is cached by value: an edit, a new key order or another number type
    (``1`` vs ``1.0`` vs ``True``, equal in Python) is never answered from the cache."""
    from airline_gym.llm.wire import encode_body

    tools = json.loads(json.dumps(TOOLS))
    body: dict[str, Any] = {"model": "m", "messages": HISTORY, "tools": tools, "seed": 3}
    seen = set()
    for change in range(6):
        if change == 1:
            tools[0]["function"]["description"] = "Changed in place."
        elif change == 2:
            params = tools[0]["function"]["parameters"]
            tools[0]["function"]["parameters"] = dict(reversed(list(params.items())))
        elif change in (3, 4, 5):
            tools[0]["function"]["parameters"]["minimum"] = [1, 1.0, True][change - 3]
        encoded = encode_body(body)
        assert encoded == json.dumps(body).encode()
        seen.add(encoded)
    assert len(seen) == 6
    odd = {"model": "m", "messages": [], "tools": [{"x": (1, 2)}]}  # not marshal-exact JSON
    assert encode_body(odd) == json.dumps(odd).encode()


def test_the_async_path_keeps_one_connection_alive_and_says_when_each_request_left(
    server: OpenAIServer,
) -> None:
    from airline_gym.llm import http11

    sent: list[bool] = []
    model = LiteLLMChatModel("openai/m", api_base=server.base_url)

    async def three() -> list[str | None]:
        return [(await model.acomplete(HISTORY)).content for _ in range(3)]

    http11.SENT_HOOKS.append(sent.append)
    try:
        answers = asyncio.run(three())
    finally:
        http11.SENT_HOOKS.remove(sent.append)
    assert answers == ["ok"] * 3 and len(server.requests) == 3
    assert sent == [True, False, False]  # one connection, opened by the first request only


def test_a_proxied_endpoint_is_left_to_litellm_which_honours_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With HTTP_PROXY set, the request goes where the proxy says (here: nowhere), not direct."""
    import socket

    with socket.socket() as probe:  # a port with nobody listening: the "proxy"
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    with OpenAIServer(default=Reply(content="hi")) as server:
        model = LiteLLMChatModel("openai/m", api_base=server.base_url, num_retries=0, timeout=5.0)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
        assert model.direct_body([{"role": "user", "content": "x"}], None) is None
        with pytest.raises(LLMError, match=r"(?i)connect"):
            model.complete([{"role": "user", "content": "x"}])
        assert server.requests == []  # nothing bypassed the proxy
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert model.direct_body([{"role": "user", "content": "x"}], None) is not None
        assert model.complete([{"role": "user", "content": "x"}]).content == "hi"
        assert len(server.requests) == 1
