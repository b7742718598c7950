"""Both direct paths (blocking: ``complete``; async: ``acomplete`` / ``http11.post``) against a
raw-socket server on 127.0.0.1 that bends HTTP: dripped headers, huge or lying lengths, a 2^63
chunk, close-delimited replies. Every case is bounded in time (the server stops by itself, the
client has a timeout) and in bytes (the server sends at most the cap plus a few MiB)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401  (registers the envs)
from airline_gym.llm import LiteLLMChatModel, LLMError, http11
from airline_gym.llm.http_reply import MAX_REPLY_BYTES
from airline_gym.testing.openai_reply import completion_body
from airline_gym.testing.raw_http_server import RawServer, read_request_head

MESSAGES = [{"role": "user", "content": "hi"}]
BODY = json.dumps(
    completion_body("c1", "raw", {"role": "assistant", "content": "Hello!"}, {"total_tokens": 3})
).encode()
PATHS = ["blocking", "async"]


def ask(path: str, base_url: str, timeout: float | None = 5.0) -> str | None:
    """One request on ``path`` without retries; the reply's text."""
    model = LiteLLMChatModel(
        "openai/raw", api_base=base_url, api_key="k", timeout=timeout, max_retries=0
    )
    if path == "blocking":
        return model.complete(MESSAGES).content
    return asyncio.run(model.acomplete(MESSAGES)).content


def head(*lines: str) -> bytes:
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def dripping_head() -> RawServer:
    """A server sending a status line and 2,000 header bytes, a byte every 10 ms (20 s in all)."""

    def handle(conn: socket.socket) -> None:
        data = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 2000 + b"\r\n"
        for byte in data:
            server.send(conn, bytes([byte]))
            time.sleep(0.01)

    server = RawServer(handle)
    return server


@pytest.mark.parametrize("path", PATHS)
def test_a_timeout_bounds_the_whole_request_while_headers_drip(path: str) -> None:
    with dripping_head() as server:
        start = time.monotonic()
        with pytest.raises(LLMError, match="timeout"):
            ask(path, server.base_url, timeout=1.0)
        elapsed = time.monotonic() - start
    assert elapsed < 4.0  # 1 s and slack for a loaded machine; the drip lasts 20 s
    assert server.sent < 1000  # it was still dripping when the client gave up


def test_the_async_client_alone_bounds_the_whole_request() -> None:
    """``http11.post`` itself, without the caller's ``wait_for``, stops at its timeout."""
    with dripping_head() as server:
        start = time.monotonic()
        with pytest.raises((TimeoutError, asyncio.TimeoutError)):  # distinct before 3.11
            asyncio.run(http11.post(server.base_url + "/chat/completions", b"{}", {}, 1.0))
        assert time.monotonic() - start < 4.0


def test_an_llm_customer_with_a_timeout_does_not_wait_on_dripped_headers() -> None:
    with dripping_head() as server:
        llm_args = {"api_base": server.base_url, "api_key": "k", "timeout": 1, "max_retries": 0}
        env = gym.make("Airline-v0", user="llm", user_model="openai/raw", user_llm_args=llm_args)
        start = time.monotonic()
        _, info = env.reset(seed=0, options={"task": "17"})
        assert time.monotonic() - start < 4.0
    assert info["termination_reason"] == "user_error" and "timeout" in info["error"]


@pytest.mark.parametrize("path", PATHS)
def test_a_huge_content_length_fails_at_once_without_reading_it(path: str) -> None:
    def handle(conn: socket.socket) -> None:
        server.send(conn, head("HTTP/1.1 200 OK", f"Content-Length: {2**31}"))
        server.send(conn, b"{" * 65536)  # a start; it never sends the rest
        time.sleep(5)

    with RawServer(handle) as server, pytest.raises(LLMError) as error:
        ask(path, server.base_url)
    assert "reply too large" in str(error.value) and "2,147,483,648 bytes" in str(error.value)
    assert error.value.attempts == 1  # not retried: the same request would get the same


def endless_body(server: RawServer, conn: socket.socket) -> None:
    """The body, 1 MiB at a time, up to the cap plus 4 MiB (then the server gives up)."""
    piece = b"x" * (1 << 20)
    while server.sent < MAX_REPLY_BYTES + (4 << 20):
        server.send(conn, piece)


@pytest.mark.parametrize("path", PATHS)
def test_a_2_to_the_63_chunk_is_cut_at_the_cap(path: str) -> None:
    def handle(conn: socket.socket) -> None:
        server.send(conn, head("HTTP/1.1 200 OK", "Transfer-Encoding: chunked"))
        server.send(conn, f"{2**63:x}\r\n".encode())
        endless_body(server, conn)

    with RawServer(handle) as server, pytest.raises(LLMError, match="reply too large"):
        ask(path, server.base_url, timeout=60)


@pytest.mark.parametrize("path", PATHS)
def test_an_endless_close_delimited_body_is_cut_at_the_cap(path: str) -> None:
    def handle(conn: socket.socket) -> None:
        server.send(conn, head("HTTP/1.1 200 OK", "Connection: close"))
        endless_body(server, conn)

    with RawServer(handle) as server, pytest.raises(LLMError) as error:
        ask(path, server.base_url, timeout=60)
    assert f"exceeds the 64 MiB cap on a reply ({MAX_REPLY_BYTES:,} bytes)" in str(error.value)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "reply_head",
    [
        ("HTTP/1.0 200 OK", "Content-Type: application/json"),
        ("HTTP/1.1 200 OK", "Content-Type: application/json", "Connection: close"),
    ],
    ids=["http1.0", "http1.1-close"],
)
def test_a_close_delimited_reply_is_accepted(path: str, reply_head: tuple[str, ...]) -> None:
    def handle(conn: socket.socket) -> None:
        server.send(conn, head(*reply_head) + BODY)  # then the server closes: the end of it

    with RawServer(handle) as server:
        assert ask(path, server.base_url) == "Hello!"
        assert ask(path, server.base_url) == "Hello!"  # a new connection: that one ended
    assert server.connections == 2


@pytest.mark.parametrize("path", PATHS)
def test_a_body_shorter_than_its_content_length_is_refused(path: str) -> None:
    def handle(conn: socket.socket) -> None:
        length = f"Content-Length: {len(BODY) + 5000}"
        server.send(conn, head("HTTP/1.1 200 OK", "Content-Type: application/json", length))
        server.send(conn, BODY)  # a whole JSON reply, 5,000 bytes short; then closed

    with RawServer(handle) as server, pytest.raises(LLMError) as error:
        ask(path, server.base_url)
    assert "connection error" in str(error.value)
    assert "incomplete" in str(error.value) or "complete message body" in str(error.value)


def test_keep_alive_still_reuses_one_connection() -> None:
    """Complete replies with a length keep the connection, on both paths."""

    def handle(conn: socket.socket) -> None:
        for i in range(3):
            if i and not read_request_head(conn):
                return
            server.send(conn, head("HTTP/1.1 200 OK", f"Content-Length: {len(BODY)}") + BODY)

    for path in PATHS:
        with RawServer(handle) as server:
            model = LiteLLMChatModel("openai/raw", api_base=server.base_url, api_key="k")

            async def three(model: Any = model) -> list[str | None]:
                return [(await model.acomplete(MESSAGES)).content for _ in range(3)]

            if path == "blocking":
                replies = [model.complete(MESSAGES).content for _ in range(3)]
            else:
                replies = asyncio.run(three())
        assert replies == ["Hello!"] * 3 and server.connections == 1, path


@pytest.mark.parametrize("path", PATHS)
def test_a_body_nested_too_deep_is_an_llm_error_not_a_recursion_error(path: str) -> None:
    nested = b"[" * 200_000 + b"]" * 200_000  # json.loads raises RecursionError on it

    def handle(conn: socket.socket) -> None:
        length = f"Content-Length: {len(nested)}"
        server.send(conn, head("HTTP/1.1 200 OK", "Content-Type: application/json", length))
        server.send(conn, nested)

    with RawServer(handle) as server, pytest.raises(LLMError) as error:
        ask(path, server.base_url)
    assert "reply is JSON nested too deep" in str(error.value)
