"""The reply cache with damaged rows and with replies nobody can use, against a real
OpenAI-compatible server on 127.0.0.1: a damaged row is a miss (the model is asked again and the
row overwritten), never a traceback and never the model's fault; a judge reply that does not
parse and a customer reply without text are never stored, so a retry really asks again."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from scripted_replies import NumberingCustomer as Customer

import airline_gym  # noqa: F401  (registers the envs)
from airline_gym.agents import text_message
from airline_gym.cli.main import main
from airline_gym.testing.openai_server import OpenAIServer, Reply

#: Rows as a damaged or hand-edited file may hold them (each was a traceback or a user_error).
DAMAGE = [
    '{"content": "trunc',
    "[]",
    "null",
    '{"content": 5}',
    '{"tool_calls": "xyz"}',
    '{"content": "x", "tool_calls": [{"function": 3}]}',
    '{"content": "x", "usage": "lots"}',
    "[" * 100_000,
    "",
]


def _damage(cache: Path) -> int:
    """Overwrite every stored reply with one of :data:`DAMAGE` (also a blob and an integer)."""
    with sqlite3.connect(cache) as connection:
        keys = [row[0] for row in connection.execute("SELECT key FROM replies ORDER BY key")]
        kinds: list[Any] = [*DAMAGE, b"\x00\xff blob", 12345]
        for key, bad in zip(keys, itertools.cycle(kinds), strict=False):
            connection.execute("UPDATE replies SET reply = ? WHERE key = ?", (bad, key))
    connection.close()
    return len(keys)


def test_damaged_rows_are_asked_again_and_overwritten(tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    with OpenAIServer(Customer()) as server:
        args = [
            "eval", "--agent", "random", "--task-ids", "0,1,2,3,4,5", "--user-model", "openai/c",
            "--user-api-base", server.base_url, "--user-cache", str(cache),
        ]  # fmt: skip
        assert main([*args, "--out", str(tmp_path / "a.json")]) == 0
        asked = len(server.requests)
        assert _damage(cache) == asked >= len(DAMAGE) + 2
        capsys.readouterr()
        assert main([*args, "--out", str(tmp_path / "b.json")]) == 0
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        assert len(server.requests) == 2 * asked  # every damaged row was a miss: asked again
        assert main([*args, "--out", str(tmp_path / "c.json")]) == 0
        assert len(server.requests) == 2 * asked  # and overwritten: the third run asks nothing
    second = json.loads((tmp_path / "b.json").read_text())
    third = json.loads((tmp_path / "c.json").read_text())
    assert second["info"]["user_cache"] == {"hits": 0, "misses": asked}
    assert third["info"]["user_cache"] == {"hits": asked, "misses": 0}
    endings = {s["termination_reason"] for s in second["simulations"]}
    assert "user_error" not in endings and endings == {
        s["termination_reason"] for s in third["simulations"]
    }


def _judge_env(customer: OpenAIServer, judge: OpenAIServer, cache: Path) -> Any:
    return gym.make(
        "Airline-v0",
        task="0",
        user_model="openai/c",
        user_llm_args={"api_base": customer.base_url, "api_key": "k"},
        user_cache=str(cache),
        reward_basis="NL_ASSERTION",
        judge="openai/judge",
        judge_llm_args={"api_base": judge.base_url, "api_key": "k"},
    )


def _two_turns(body: dict[str, Any]) -> Reply:
    turns = sum(1 for m in body["messages"] if m["role"] == "user")
    return Reply("hi, I need help" if turns < 2 else "thanks, bye ###STOP###")


def test_a_judge_retry_asks_the_judge_again_with_a_cache(tmp_path):
    verdict = {"expectedOutcome": "A", "reasoning": "r", "metExpectation": True}
    replies = iter([Reply("I think the agent did fine.")])

    def judge_model(body: dict[str, Any]) -> Reply:
        return next(replies, Reply(json.dumps({"results": [verdict]})))

    cache = tmp_path / "c.sqlite"
    with OpenAIServer(_two_turns) as customer, OpenAIServer(judge_model) as judge:
        for run in (1, 2):
            env = _judge_env(customer, judge, cache)
            env.reset(seed=1)
            _, reward, terminated, _, info = env.step(text_message("Anything else?"))
            assert terminated and "error" not in info
            assert reward == 1.0 and info["reward_info"]["nl_assertions"][0]["met"] is True
            # the prose reply was not stored: the retry asked again, and the good verdict is kept
            assert len(judge.requests) == 2, run
            env.close()


def test_a_customer_reply_without_text_is_not_stored(tmp_path):
    call = {"name": "get_user_details", "arguments": {"user_id": "x"}}
    replies = iter([Reply(content=None, tool_calls=[call])])

    def customer_model(body: dict[str, Any]) -> Reply:
        return next(replies, Reply("hi, I need help"))

    cache = tmp_path / "c.sqlite"
    with OpenAIServer(customer_model) as customer:
        env = gym.make(
            "Airline-v0",
            task="0",
            user_model="openai/c",
            user_llm_args={"api_base": customer.base_url, "api_key": "k"},
            user_cache=str(cache),
        )
        _, info = env.reset(seed=1)
        assert info["termination_reason"] == "user_error"
        observation, info = env.reset(seed=1)  # the same request: asked again, not a cached fault
        assert len(customer.requests) == 2 and info["termination_reason"] is None
        assert observation[-1]["content"] == "hi, I need help"
        env.reset(seed=1)
        assert len(customer.requests) == 2  # the reply with text was stored
        env.close()


@pytest.mark.parametrize("bad", DAMAGE)
def test_a_damaged_row_is_a_miss_for_the_python_api(tmp_path, bad):
    from airline_gym.llm import CachedChatModel, LiteLLMChatModel, ReplyCache

    cache = ReplyCache(tmp_path / "c.sqlite")
    with OpenAIServer(Customer()) as server:
        model = CachedChatModel(
            LiteLLMChatModel("openai/c", api_base=server.base_url, api_key="k"), cache
        )
        messages = [{"role": "user", "content": "hi"}]
        assert model.complete(messages).content.startswith("reply 1 ")
        with sqlite3.connect(cache.path) as connection:
            connection.execute("UPDATE replies SET reply = ?", (bad,))
        connection.close()
        assert model.complete(messages).content.startswith("reply 2 ")
        assert model.complete(messages).content.startswith("reply 2 ")
    assert len(server.requests) == 2 and cache.counts() == {"hits": 1, "misses": 2}
