"""The customer reply cache on the wire: a real OpenAI-compatible server on 127.0.0.1 counts the
requests, and every reply it sends carries the request's number, so a transcript shows which
replies came from the model and which from the cache."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from scripted_replies import NumberingCustomer as Customer

import airline_gym
from airline_gym.agents import text_message
from airline_gym.cli.main import main
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.llm import CachedChatModel, LiteLLMChatModel, ReplyCache, ReplyCacheError
from airline_gym.llm.reply_cache import request_key
from airline_gym.testing.openai_server import OpenAIServer

TASKS = ["0", "1", "2", "3", "4", "5"]


def llm_config(server: OpenAIServer, cache: Any, **extra: Any) -> EvalConfig:
    args = {"api_base": server.base_url, "api_key": "sk-test", "backoff": 0.01}
    return EvalConfig(
        task_ids=TASKS,
        user="llm",
        user_model="openai/customer",
        user_llm_args=args,
        user_cache=cache,
        **extra,
    )


def dialogue(results: Any) -> list[Any]:
    """Per simulation: task, trial, reward, ending and the messages' roles, texts and calls."""
    return [
        (
            s["task_id"],
            s["trial"],
            s["reward_info"]["reward"],
            s["termination_reason"],
            [(m["role"], m.get("content"), m.get("tool_calls")) for m in s["messages"]],
        )
        for s in results.simulations
    ]


# --- the key ----------------------------------------------------------------------------------
def test_the_key_is_the_request_not_the_transport():
    model = LiteLLMChatModel("openai/m", api_base="http://127.0.0.1:1/v1", seed=7, temperature=0)
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    body = model.litellm_request(messages, None)
    moved = LiteLLMChatModel("openai/m", api_base="http://127.0.0.1:2/v1", seed=7, timeout=9.0)
    assert request_key(body) == request_key(moved.litellm_request(messages, None))
    for changed in (
        LiteLLMChatModel("openai/m", seed=8),
        LiteLLMChatModel("openai/m", seed=7, temperature=0.5),
        LiteLLMChatModel("openai/other", seed=7),
        LiteLLMChatModel("openai/m", seed=7, extra={"max_tokens": 10}),
    ):
        assert request_key(changed.litellm_request(messages, None)) != request_key(body)
    longer = [*messages, {"role": "assistant", "content": "x"}]
    assert request_key(model.litellm_request(longer, None)) != request_key(body)


def test_credentials_are_neither_keyed_nor_written(tmp_path):
    secret = "sk-very-secret-123"
    headers = {"Authorization": f"Bearer {secret}"}
    with OpenAIServer(Customer()) as server:
        model = LiteLLMChatModel(
            "openai/c", api_base=server.base_url, api_key=secret, extra={"extra_headers": headers}
        )
        cache = ReplyCache(tmp_path / "c.sqlite")
        CachedChatModel(model, cache).complete([{"role": "user", "content": "hi"}])
        plain = LiteLLMChatModel("openai/c", api_base=server.base_url, api_key="other")
        again = CachedChatModel(plain, cache).complete([{"role": "user", "content": "hi"}])
        assert len(server.requests) == 1 and again.content.startswith("reply 1 ")
    cache.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert secret.encode() not in stored and b"reply 1 " in stored


# --- eval: a second identical run asks the model nothing ---------------------------------------
@pytest.mark.parametrize("agent", ["random", "threaded"])
def test_second_identical_run_makes_no_customer_request(tmp_path, agent):
    """``random`` plays on the event loop (areply), ``threaded`` (a blocking agent) in threads."""
    from airline_gym.agents.registry import builtin_agent
    from airline_gym.domain.tasks import load_task_set

    tasks = load_task_set("tau2")

    def player(seed: int) -> Any:
        inner = builtin_agent("random", tasks, seed)

        class Blocking:  # only act(): evaluate plays it in threads
            def reset(self, info: dict[str, Any]) -> None:
                inner.reset(info)

            def act(self, observation: Any, info: dict[str, Any]) -> Any:
                return inner.act(observation, info)

        return Blocking()

    who = "random" if agent == "random" else player
    cache = tmp_path / "replies.sqlite"
    with OpenAIServer(Customer()) as server:
        first = evaluate(who, llm_config(server, str(cache), concurrency=3, trials=2))
        asked = len(server.requests)
        second = evaluate(who, llm_config(server, str(cache), concurrency=3, trials=2))
        assert len(server.requests) == asked  # not one customer request the second time
    assert asked >= 2 * len(TASKS)  # every episode's opener at least
    assert first.info["user_cache"] == {"hits": 0, "misses": asked}
    assert second.info["user_cache"] == {"hits": asked, "misses": 0}
    assert dialogue(second) == dialogue(first)
    assert len(ReplyCache(cache)) == asked


def test_cli_summary_and_info_show_hits_and_misses(tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    with OpenAIServer(Customer()) as server:
        args = [
            "eval", "--agent", "random", "--task-ids", "0,1", "--user-model", "openai/c",
            "--user-api-base", server.base_url, "--user-cache", str(cache),
        ]  # fmt: skip
        assert main([*args, "--out", str(tmp_path / "a.json")]) == 0
        misses = len(server.requests)
        assert f"user cache: 0 hits, {misses} misses" in capsys.readouterr().out
        assert main([*args, "--out", str(tmp_path / "b.json"), "--json"]) == 0
        assert len(server.requests) == misses
    printed = json.loads(capsys.readouterr().out)
    assert printed["user_cache"] == {"hits": misses, "misses": 0}
    saved = json.loads((tmp_path / "b.json").read_text())["info"]["user_cache"]
    assert saved == {"hits": misses, "misses": 0}


def test_a_changed_dialogue_misses_only_from_where_it_changed(tmp_path):
    cache = tmp_path / "c.sqlite"
    with OpenAIServer(Customer()) as server:
        env = gym.make(
            "Airline-v0",
            task=3,
            user_model="openai/c",
            user_llm_args={"api_base": server.base_url, "api_key": "k"},
            user_cache=str(cache),
        )
        opener, _ = env.reset(seed=4)
        env.step(text_message("What is your user id?"))
        assert len(server.requests) == 2
        again, _ = env.reset(seed=4)  # the same state: the opener from the cache
        assert again == opener and len(server.requests) == 2
        obs, *_ = env.step(text_message("Something else entirely?"))  # a new state: asked
        assert len(server.requests) == 3 and obs[-1]["content"].startswith("reply 3 ")
        other_seed, _ = env.reset(seed=5)  # another seed is another request
        assert len(server.requests) == 4 and other_seed != opener
    assert env.unwrapped.user.cache.counts() == {"hits": 1, "misses": 4}


# --- concurrency: threads, the event loop and several processes --------------------------------
_WORKER = """
import sys
from airline_gym.harness.evaluate import EvalConfig, evaluate
base, cache, tasks = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
config = EvalConfig(task_ids=tasks, user="llm", user_model="openai/customer", concurrency=4,
                    user_llm_args={"api_base": base, "api_key": "k"}, user_cache=cache)
print(evaluate("random", config).info["user_cache"])
"""


def test_several_processes_share_one_cache_file(tmp_path):
    cache = tmp_path / "shared.sqlite"
    env = {**os.environ, "PYTHONPATH": str(Path(airline_gym.__file__).parents[1])}
    with OpenAIServer(Customer()) as server:
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, server.base_url, str(cache), ids],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for ids in ("0,1,2,3,4,5,6,7", "4,5,6,7,8,9,10,11", "0,2,4,6,8,10,12,14")
        ]
        outputs = [w.communicate(timeout=300) for w in workers]
        assert [w.returncode for w in workers] == [0, 0, 0], [err for _, err in outputs]
        requests = len(server.requests)
        # each distinct request is stored once; a re-run of the union asks nothing
        stored = len(ReplyCache(cache))
        assert stored <= requests
        union = ",".join(str(t) for t in (*range(12), 12, 14))
        config = llm_config(server, str(cache), concurrency=4)
        config.task_ids = union.split(",")
        rerun = evaluate("random", config)
        assert len(server.requests) == requests
    assert rerun.info["user_cache"]["misses"] == 0
    with sqlite3.connect(cache) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# --- a damaged or foreign file -----------------------------------------------------------------
def test_a_damaged_cache_is_a_one_line_error(tmp_path, capsys):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database, just some bytes " * 200)
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    connection.close()
    before = foreign.read_bytes()
    with OpenAIServer(Customer()) as server:
        for path, text in (
            (broken, "not usable (file is not a database)"),
            (foreign, "an SQLite file of something else, not a reply cache"),
            (tmp_path, "is a folder, not a file"),
        ):
            args = ["eval", "--agent", "noop", "--task-ids", "0", "--user-model", "openai/c"]
            args += ["--user-api-base", server.base_url, "--user-cache", str(path)]
            assert main([*args, "--out", str(tmp_path / "x.json")]) == 2
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and text in err[0] and str(path) in err[0], err
        assert server.requests == []  # refused before any episode
    assert foreign.read_bytes() == before  # another program's database is left alone
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(ReplyCacheError, match="not usable"):
        gym.make("Airline-v0", user_model="openai/c", user_cache=str(broken))
    with pytest.raises(ConfigError, match="needs the LLM customer"):
        gym.make("AirlineScripted-v0", user_cache=str(tmp_path / "new.sqlite"))
    assert main(["eval", "--agent", "noop", "--user-cache", str(tmp_path / "n.sqlite")]) == 2
    assert "--user-cache needs --user llm" in capsys.readouterr().err


def test_damage_during_a_run_ends_episodes_with_a_recorded_cause(tmp_path):
    cache = ReplyCache(tmp_path / "c.sqlite")
    with OpenAIServer(Customer()) as server:
        model = CachedChatModel(
            LiteLLMChatModel("openai/c", api_base=server.base_url, api_key="k"), cache
        )
        assert model.complete([{"role": "user", "content": "hi"}]).content.startswith("reply 1")
        cache.close()
        (tmp_path / "c.sqlite").write_bytes(b"garbage" * 1000)
        for suffix in ("-wal", "-shm"):
            (tmp_path / f"c.sqlite{suffix}").unlink(missing_ok=True)
        results = evaluate("random", llm_config(server, cache))
    causes = {s["reward_info"]["info"].get("error") for s in results.simulations}
    assert {s["termination_reason"] for s in results.simulations} == {"user_error"}
    assert len(causes) == 1 and "not usable" in next(iter(causes))


def test_a_pickled_cache_reopens_the_same_file(tmp_path):
    import pickle

    cache = ReplyCache(tmp_path / "c.sqlite")
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    from airline_gym.llm import ChatReply

    cache.put(body, ChatReply(content="stored", tool_calls=[]))
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.path == cache.path and copy.get(body).content == "stored"
    assert copy.counts() == {"hits": 1, "misses": 0}


def test_resumed_run_adds_its_hits_and_misses(tmp_path):
    cache, out = tmp_path / "c.sqlite", tmp_path / "run.json"
    with OpenAIServer(Customer()) as server:
        first = evaluate("random", llm_config(server, str(cache)), out=out)
        asked = len(server.requests)
        more = evaluate("random", llm_config(server, str(cache), trials=2), out=out, resume=True)
        new = len(server.requests) - asked
    assert first.info["user_cache"] == {"hits": 0, "misses": asked}
    # the second trials have other seeds: new requests, all misses, added to the first run's
    assert new > 0 and more.info["user_cache"] == {"hits": 0, "misses": asked + new}
    assert json.loads(out.read_text())["info"]["user_cache"] == more.info["user_cache"]
