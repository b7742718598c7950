"""LiteLLMChatModel against a real local OpenAI-compatible server (real HTTP through litellm)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pickle
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airline_gym.llm import ChatModel, ChatReply, LiteLLMChatModel, LLMError, check_credentials
from airline_gym.testing import OpenAIServer, Reply

MESSAGES = [
    {"role": "system", "content": "You are an airline agent."},
    {"role": "user", "content": "Hi, I want to change my flight."},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_user_details",
            "description": "Get user details.",
            "parameters": {
                "type": "object",
                "properties": {"user_id": {"type": "string"}},
                "required": ["user_id"],
            },
        },
    }
]


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


def make_model(server: OpenAIServer, **kw: Any) -> LiteLLMChatModel:
    opts: dict[str, Any] = {"timeout": 5.0, "max_retries": 3, "backoff": 0.01}
    opts.update(kw)
    return LiteLLMChatModel("openai/scripted", api_base=server.base_url, api_key="sk-test", **opts)


# -- happy paths ---------------------------------------------------------------------------


def test_plain_reply(server: OpenAIServer) -> None:
    server.push(Reply("Sure, what is your user id?"))
    model = make_model(server)
    assert isinstance(model, ChatModel)
    reply = model.complete(MESSAGES)
    assert isinstance(reply, ChatReply)
    assert reply.content == "Sure, what is your user id?"
    assert reply.tool_calls == []
    assert reply.usage is not None and reply.usage["completion_tokens"] > 0
    assert reply.raw is not None and reply.raw["choices"][0]["message"]["content"] == reply.content
    assert len(server.requests) == 1


def test_tool_call_reply_is_plain_dicts(server: OpenAIServer) -> None:
    server.push(
        Reply(
            tool_calls=[
                {"name": "get_user_details", "arguments": {"user_id": "mia_li_3668"}},
                {"name": "get_user_details", "arguments": '{"user_id": "raw"}'},
            ]
        )
    )
    reply = make_model(server).complete(MESSAGES, tools=TOOLS)
    assert reply.content is None
    assert len(reply.tool_calls) == 2
    for tc in reply.tool_calls:
        assert type(tc) is dict and type(tc["function"]) is dict
        assert set(tc) == {"id", "type", "function"}
        assert tc["type"] == "function" and tc["id"]
        assert tc["function"]["name"] == "get_user_details"
        assert isinstance(tc["function"]["arguments"], str)
    assert json.loads(reply.tool_calls[0]["function"]["arguments"]) == {"user_id": "mia_li_3668"}
    assert json.loads(reply.tool_calls[1]["function"]["arguments"]) == {"user_id": "raw"}
    json.dumps(reply.tool_calls)  # round-trips into the next request as-is


def test_request_on_the_wire(server: OpenAIServer) -> None:
    server.push(Reply("a"), Reply("b"))
    make_model(server, seed=1234).complete(MESSAGES, tools=TOOLS)
    make_model(server).complete(MESSAGES)
    with_seed, without_seed = server.requests
    assert with_seed["model"] == "scripted"
    assert with_seed["messages"] == MESSAGES
    assert with_seed["tools"] == TOOLS
    assert with_seed["temperature"] == 0
    assert with_seed["seed"] == 1234
    assert not with_seed.get("stream")
    assert "seed" not in without_seed and "tools" not in without_seed
    assert without_seed["temperature"] == 0


def test_callable_script_and_inputs_not_mutated() -> None:
    def responder(body: dict[str, Any]) -> Reply:
        return Reply(f"you said: {body['messages'][-1]['content']}")

    messages = [{"role": "user", "content": "ping"}]
    snapshot = json.dumps(messages)
    with OpenAIServer(responder) as srv:
        assert make_model(srv).complete(messages).content == "you said: ping"
    assert json.dumps(messages) == snapshot


# -- retries -------------------------------------------------------------------------------


def test_500_then_success(server: OpenAIServer) -> None:
    server.push(Reply(fault="500"), Reply("ok"))
    assert make_model(server).complete(MESSAGES).content == "ok"
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", ["408", "409", "502", "503"])
def test_other_transient_statuses_retried(server: OpenAIServer, status: str) -> None:
    server.push(Reply(fault=status), Reply("ok"))
    assert make_model(server).complete(MESSAGES).content == "ok"
    assert len(server.requests) == 2


def test_429_honours_retry_after(server: OpenAIServer) -> None:
    server.push(Reply(fault="429", retry_after="0"), Reply("ok"))
    start = time.monotonic()
    # A huge backoff proves the server's Retry-After (0 s) was used instead.
    assert make_model(server, backoff=20.0).complete(MESSAGES).content == "ok"
    assert time.monotonic() - start < 3.0
    assert len(server.requests) == 2

    server.push(Reply(fault="429", retry_after="0.3"), Reply("ok"))
    start = time.monotonic()
    assert make_model(server).complete(MESSAGES).content == "ok"
    assert time.monotonic() - start >= 0.3


def test_hang_times_out_then_llm_error(server: OpenAIServer) -> None:
    server.push(*[Reply(fault="hang")] * 3)
    model = make_model(server, timeout=0.5, max_retries=2)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        model.complete(MESSAGES)
    elapsed = time.monotonic() - start
    assert 1.5 <= elapsed < 5.0  # 3 attempts x 0.5 s, no hidden SDK retries
    assert len(server.requests) == 3
    assert info.value.attempts == 3
    assert "timeout" in info.value.cause and "after 3 attempts" in info.value.cause
    assert server.base_url in info.value.cause


def test_hang_then_success(server: OpenAIServer) -> None:
    server.push(Reply(fault="hang"), Reply("ok"))
    assert make_model(server, timeout=0.5).complete(MESSAGES).content == "ok"
    assert len(server.requests) == 2


def test_dropped_connection_retried(server: OpenAIServer) -> None:
    server.push(Reply(fault="drop"), Reply(fault="drop"), Reply("ok"))
    assert make_model(server).complete(MESSAGES).content == "ok"
    assert len(server.requests) == 3


def test_dropped_connection_exhausts(server: OpenAIServer) -> None:
    server.push(*[Reply(fault="drop")] * 2)
    with pytest.raises(LLMError, match="connection error") as info:
        make_model(server, max_retries=1).complete(MESSAGES)
    assert info.value.attempts == 2


def test_empty_reply_retried_then_error(server: OpenAIServer) -> None:
    server.push(Reply(fault="empty"), Reply("ok"))
    assert make_model(server).complete(MESSAGES).content == "ok"
    assert len(server.requests) == 2

    server.requests.clear()
    server.push(Reply(fault="empty"), Reply(content=""), Reply(content="  \n"))
    with pytest.raises(LLMError) as info:
        make_model(server, max_retries=2).complete(MESSAGES)
    assert len(server.requests) == 3
    assert info.value.attempts == 3 and info.value.retryable
    assert "after 3 attempts" in info.value.cause and "empty reply" in info.value.cause


def test_empty_reply_allowed_when_not_required(server: OpenAIServer) -> None:
    server.push(Reply(fault="empty"))
    reply = make_model(server, require_content=False).complete(MESSAGES)
    assert reply.content is None and reply.tool_calls == []
    assert len(server.requests) == 1


def test_garbage_body_retried(server: OpenAIServer) -> None:
    server.push(Reply(fault="garbage"), Reply("ok"))
    assert make_model(server).complete(MESSAGES).content == "ok"
    assert len(server.requests) == 2


def test_bad_tool_json_retried(server: OpenAIServer) -> None:
    good = Reply(tool_calls=[{"name": "get_user_details", "arguments": {"user_id": "x"}}])
    server.push(Reply(fault="bad_json"), good)
    reply = make_model(server).complete(MESSAGES, tools=TOOLS)
    assert json.loads(reply.tool_calls[0]["function"]["arguments"]) == {"user_id": "x"}
    assert len(server.requests) == 2

    server.push(Reply(fault="bad_json"))
    reply = make_model(server, validate_tool_json=False).complete(MESSAGES, tools=TOOLS)
    assert reply.tool_calls[0]["function"]["arguments"] == '{"oops": '


@pytest.mark.parametrize("status", ["401", "400", "403", "404"])
def test_client_errors_not_retried(server: OpenAIServer, status: str) -> None:
    server.push(Reply(fault=status), Reply("never sent"))
    with pytest.raises(LLMError) as info:
        make_model(server).complete(MESSAGES)
    assert len(server.requests) == 1
    assert info.value.status_code == int(status)
    assert info.value.attempts == 1 and not info.value.retryable
    assert f"HTTP {status}" in info.value.cause and "not retryable" in info.value.cause


def test_exhausted_script_is_a_clear_500(server: OpenAIServer) -> None:
    with pytest.raises(LLMError, match="script exhausted") as info:
        make_model(server, max_retries=0).complete(MESSAGES)
    assert info.value.status_code == 500


# -- async ---------------------------------------------------------------------------------


def test_acomplete_concurrent(server: OpenAIServer) -> None:
    server.default = Reply("ok")
    model = make_model(server)

    async def run() -> list[ChatReply]:
        return await asyncio.gather(*[model.acomplete(MESSAGES) for _ in range(20)])

    replies = asyncio.run(run())
    assert [r.content for r in replies] == ["ok"] * 20
    assert len(server.requests) == 20


def test_acomplete_retries(server: OpenAIServer) -> None:
    server.push(Reply(fault="500"), Reply(fault="hang"), Reply("ok"), Reply(fault="401"))
    model = make_model(server, timeout=0.5)
    assert asyncio.run(model.acomplete(MESSAGES)).content == "ok"
    assert len(server.requests) == 3
    with pytest.raises(LLMError, match="HTTP 401"):
        asyncio.run(model.acomplete(MESSAGES))
    assert len(server.requests) == 4


# -- credentials, import cost, pickling ----------------------------------------------------


def test_check_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    message = check_credentials("gpt-4.1")
    assert message is not None and "\n" not in message
    assert "OPENAI_API_KEY" in message and 'user="scripted"' in message
    assert check_credentials("gpt-4.1", api_base="http://127.0.0.1:8000/v1") is None
    assert check_credentials("gpt-4.1", api_key="sk-explicit") is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert check_credentials("gpt-4.1") is None


def test_import_does_not_import_litellm() -> None:
    code = "import sys, airline_gym.llm; assert 'litellm' not in sys.modules, 'litellm imported'"
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, cwd=root)


def test_model_pickles(server: OpenAIServer) -> None:
    model = make_model(server, seed=3, extra={"top_p": 0.5})
    clone = pickle.loads(pickle.dumps(model))
    assert clone == model
    server.push(Reply("after pickling"))
    assert clone.complete(MESSAGES).content == "after pickling"
    assert server.requests[0]["top_p"] == 0.5


def test_llm_error_pickles_with_details(server: OpenAIServer) -> None:
    server.push(Reply(fault="401"))
    with pytest.raises(LLMError) as info:
        make_model(server).complete(MESSAGES)
    clone = pickle.loads(pickle.dumps(info.value))
    assert (clone.cause, clone.attempts, clone.status_code, clone.retryable) == (
        info.value.cause,
        1,
        401,
        False,
    )


def test_cost_reported_for_a_priced_model(server: OpenAIServer) -> None:
    server.push(Reply("hello there"), Reply("hello there"))
    model = LiteLLMChatModel("openai/gpt-4o-mini", api_base=server.base_url, api_key="sk-test")
    cost = model.complete(MESSAGES).cost
    assert cost is not None and cost > 0
    assert make_model(server).complete(MESSAGES).cost is None  # unpriced model name


def test_extra_may_not_override_managed_kwargs() -> None:
    with pytest.raises(ValueError, match="num_retries"):
        LiteLLMChatModel("openai/x", extra={"num_retries": 5})


# -- the server itself ---------------------------------------------------------------------


def test_server_models_endpoint_and_stream() -> None:
    import litellm  # only the raw server behaviour is under test here

    with OpenAIServer(default=Reply("streamed hello")) as srv:
        with urllib.request.urlopen(f"{srv.base_url}/models", timeout=5) as resp:
            assert json.load(resp)["data"][0]["id"] == "scripted"
        chunks = litellm.completion(
            model="openai/scripted",
            api_base=srv.base_url,
            api_key="sk-test",
            messages=MESSAGES,
            stream=True,
            max_retries=0,
        )
        assert "".join(c.choices[0].delta.content or "" for c in chunks) == "streamed hello"


def test_server_stops_promptly_with_hanging_handler() -> None:
    srv = OpenAIServer([Reply(fault="hang", hang_seconds=30)]).start()
    port = int(srv.base_url.split(":")[2].split("/")[0])
    body = json.dumps({"model": "m", "messages": []}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(sock.recv(1024)), daemon=True)
    reader.start()
    deadline = time.monotonic() + 5
    while not srv.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.requests, "server never saw the request"
    start = time.monotonic()
    srv.stop()
    reader.join(timeout=5)
    assert time.monotonic() - start < 2.0
    assert received == [b""]  # closed without a response
    sock.close()


# -- request arguments: tool_choice, num_retries, timeout, keys ----------------------------------


def test_tool_choice_sent_only_when_set(server: OpenAIServer) -> None:
    server.push(Reply("a"), Reply("b"))
    make_model(server, tool_choice="auto").complete(MESSAGES, tools=TOOLS)
    make_model(server).complete(MESSAGES, tools=TOOLS)
    assert server.requests[0]["tool_choice"] == "auto"
    assert "tool_choice" not in server.requests[1]


@pytest.mark.parametrize("tenacity", ["as installed", "absent"])
def test_num_retries_makes_as_many_requests_as_litellms(
    server: OpenAIServer, tenacity: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``num_retries=3`` makes 4 requests (1 + 3 retries), as litellm's own ``num_retries=3``
    does when only the openai SDK under it retries. litellm (1.110, measured over openai 2 and
    3) passes ``num_retries`` to the SDK as ``max_retries`` (1 + n requests) and then, when
    ``tenacity`` is importable, retries the whole call n times more (``completion_with_retries``:
    2n + 1 = 7); without it that second round fails at once. Ours never depends on tenacity."""
    import importlib.util

    from airline_gym.llm import load_litellm

    if tenacity == "absent":
        monkeypatch.setitem(sys.modules, "tenacity", None)  # `import tenacity` raises, as absent
    has_tenacity = tenacity == "as installed" and importlib.util.find_spec("tenacity") is not None
    litellm = load_litellm()
    server.default = Reply(fault="500")
    with pytest.raises(Exception):  # noqa: B017 - litellm's own error type is not under test
        litellm.completion(
            model="openai/scripted",
            api_base=server.base_url,
            api_key="sk-test",
            messages=MESSAGES,
            num_retries=3,
        )
    assert len(server.requests) == (1 + 3 + 3 if has_tenacity else 1 + 3)  # litellm's
    server.requests.clear()
    with pytest.raises(LLMError) as info:
        LiteLLMChatModel(
            "openai/scripted", api_base=server.base_url, num_retries=3, backoff=0.01
        ).complete(MESSAGES)
    assert len(server.requests) == 4 == info.value.attempts  # ours, with or without tenacity


def test_max_retries_is_another_name_for_num_retries() -> None:
    model = LiteLLMChatModel("openai/x", max_retries=1)
    assert model.num_retries == model.max_retries == 1
    assert LiteLLMChatModel.from_args("openai/x", {"max_retries": 2}).num_retries == 2
    with pytest.raises(ValueError, match="one setting"):
        LiteLLMChatModel("openai/x", num_retries=1, max_retries=2)


def test_no_timeout_by_default_and_a_set_one_cuts(server: OpenAIServer) -> None:
    slow = Reply("slow but fine", delay=1.5)
    server.push(slow)
    model = LiteLLMChatModel("openai/scripted", api_base=server.base_url, backoff=0.01)
    assert model.timeout is None
    assert model.complete(MESSAGES).content == "slow but fine"
    server.push(slow)
    with pytest.raises(LLMError, match="timeout"):
        dataclasses.replace(model, timeout=0.5, num_retries=0).complete(MESSAGES)


def test_local_endpoint_needs_no_key(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.push(Reply("no key needed"))
    model = LiteLLMChatModel("openai/scripted", api_base=server.base_url)
    assert model.complete(MESSAGES).content == "no key needed"


def test_hosted_model_without_key_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    from airline_gym.llm import load_litellm

    load_litellm()  # its import is not what is timed
    start = time.perf_counter()
    with pytest.raises(LLMError) as info:
        LiteLLMChatModel("openai/gpt-4.1", backoff=5).complete(MESSAGES)
    assert time.perf_counter() - start < 3  # no backoff: nothing was retried
    assert info.value.attempts == 0 and not info.value.retryable
    assert "OPENAI_API_KEY" in info.value.cause and "HTTP" not in info.value.cause


def test_retries_are_logged_and_quiet_by_default(
    server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.push(Reply(fault="503"), Reply("ok"))
    with caplog.at_level("INFO", logger="airline_gym.llm"):
        assert make_model(server).complete(MESSAGES).content == "ok"
    retries = [r for r in caplog.records if r.name == "airline_gym.llm.client"]
    assert len(retries) == 1 and "attempt 1/4" in retries[0].getMessage()
    assert "HTTP 503" in retries[0].getMessage()
    # without logging configured, a failure for good prints nothing (no lastResort handler)
    code = (
        "from airline_gym.llm import LiteLLMChatModel, LLMError\n"
        f"m = LiteLLMChatModel('openai/x', api_base={server.base_url!r}, num_retries=0)\n"
        "try:\n    m.complete([{'role': 'user', 'content': 'hi'}])\n"
        "except LLMError:\n    pass\n"
    )
    server.push(Reply(fault="500"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""


def test_a_threads_keep_alive_connection_is_closed_when_the_thread_ends(
    server: OpenAIServer,
) -> None:
    """The blocking fast path keeps one connection per thread; a thread that ends closes its
    own (it was left to the GC: ``ResourceWarning: unclosed <socket>`` from eval's threads)."""
    import gc
    import warnings

    server.push(Reply("from a thread"))
    model = make_model(server)
    replies: list[str | None] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        worker = threading.Thread(target=lambda: replies.append(model.complete(MESSAGES).content))
        worker.start()
        worker.join(30)
        del worker
        gc.collect()
    assert replies == ["from a thread"]
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


_LOAD_THEN_REPLACE_THE_LOOP = """
import asyncio, gc, warnings
from airline_gym.llm import load_litellm
load_litellm()  # in the main thread, which has no event loop yet
asyncio.run(asyncio.sleep(0))  # a later run replaces whatever loop the main thread holds
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    gc.collect()
print([str(w.message)[:80] for w in caught if issubclass(w.category, ResourceWarning)])
"""


def test_loading_litellm_leaves_no_event_loop_to_leak() -> None:
    """litellm's warm-up call must not leave an unclosed event loop set in the caller's thread
    (a fresh interpreter: litellm is loaded once per process)."""
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_THEN_REPLACE_THE_LOOP],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
