"""Grading never raises out of ``env.step()`` / ``env.astep()``: a failure ends the episode.

The failures are provoked through inputs, not by patching our code: a judge (a chat model the
caller passes in, used as is) whose reply object breaks when read (a failure of grading itself
that must stay visible), an NL judge (a scripted OpenAI-compatible server on 127.0.0.1) that
replies with text that is not JSON at all, or JSON nested 200,000 deep (judge failures the
grade records), and a task whose gold actions fail to replay.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import optional_libs
import pytest

import airline_gym  # noqa: F401  (registers the env ids)
from airline_gym.domain.tasks import load_task_set
from airline_gym.testing.openai_server import OpenAIServer, Reply
from airline_gym.wrappers import ErrorPenalty, PartialReward, ProgressReward

NESTED = "[" * 200_000 + "]" * 200_000  # json.loads raises RecursionError on it
BROKEN_PARSER = "grading the episode (ended: agent_stop) failed: RuntimeError: the reply broke"
TASK = "0"


class _BrokenReply:
    """A reply whose text cannot be read: what grading itself cannot survive."""

    @property
    def content(self) -> str:
        raise RuntimeError("the reply broke")


class BrokenJudge:
    """A chat model (passed as ``judge=``) whose every reply breaks when read; counts requests."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def complete(self, messages: list[dict[str, Any]]) -> _BrokenReply:
        self.requests.append(messages)
        return _BrokenReply()


def _done() -> dict[str, Any]:
    call = {"id": "d", "type": "function", "function": {"name": "done", "arguments": "{}"}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _judged_env(judge: Any, **kwargs: Any) -> Any:
    """The env judged by ``judge``: a chat model, or the base URL of a server to ask."""
    settings: dict[str, Any] = {"judge": judge}
    if isinstance(judge, str):
        settings = {"judge": "openai/judge", "judge_llm_args": {"api_base": judge}}
    return gym.make(
        "AirlineScripted-v0", task=TASK, reward_basis=["DB", "NL_ASSERTION"], **settings, **kwargs
    )


def _assert_grading_failed(step: tuple[Any, ...]) -> None:
    _, reward, terminated, truncated, info = step
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["termination_reason"] == "agent_error"
    assert info["error"].startswith(BROKEN_PARSER)  # the exception's type and text
    assert info["reward_info"]["reward"] == 0.0
    assert info["reward_info"]["termination_reason"] == "agent_error"
    assert info["reward_info"]["note"] == info["error"]
    assert info["reward_info"]["reward_basis"] == ["DB", "NL_ASSERTION"]


def test_a_judge_reply_that_breaks_grading_ends_the_sync_step_with_the_cause() -> None:
    judge = BrokenJudge()
    env = _judged_env(judge)
    env.reset(seed=0)
    _assert_grading_failed(env.step(_done()))
    assert len(judge.requests) == 1  # the failure is not retried by grading again
    episode = env.unwrapped.episode
    assert episode.grade().note.startswith(BROKEN_PARSER)  # the kept grade
    with pytest.raises(gym.error.ResetNeeded, match=r"ended \(agent_error\)"):
        env.step(_done())  # past the end: refused, nothing graded again
    assert episode.grade().note.startswith(BROKEN_PARSER)
    assert len(judge.requests) == 1


def test_a_judge_reply_that_breaks_grading_ends_the_async_step_with_the_cause() -> None:
    async def episode(judge: Any) -> tuple[Any, ...]:
        env = _judged_env(judge).unwrapped
        await env.areset(seed=0)
        return await env.astep(_done())  # type: ignore[no-any-return]

    judge = BrokenJudge()
    _assert_grading_failed(asyncio.run(episode(judge)))
    assert len(judge.requests) == 1


@pytest.mark.parametrize(
    "wrap",
    [PartialReward, ErrorPenalty, ProgressReward, lambda env: env],
    ids=["PartialReward", "ErrorPenalty", "ProgressReward", "reward=partial"],
)
def test_every_reward_wrapper_passes_the_failure_on(wrap: Any) -> None:
    shaped = {"reward": "partial"} if wrap.__name__ == "<lambda>" else {}
    env = wrap(_judged_env(BrokenJudge(), **shaped))
    env.reset(seed=0)
    _assert_grading_failed(env.step(_done()))


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        ("the assertions look fine to me", "the reply is not JSON"),
        (NESTED, "the reply is JSON nested too deep"),  # json.loads: RecursionError
    ],
    ids=["prose", "nested-200000-deep"],
)
def test_a_judge_that_replies_garbage_is_a_recorded_judge_failure(reply: str, cause: str) -> None:
    """Garbage the parser reads and refuses: the judge is asked again, then its failure is the
    grade's cause (the episode keeps its own ending; reward 0)."""
    with OpenAIServer(default=Reply(reply)) as server:
        env = _judged_env(server.base_url)
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(_done())
        assert len(server.requests) == 3
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["termination_reason"] == "agent_stop" and "error" not in info
    grade = info["reward_info"]
    assert grade["judge_error"].startswith(f"NL judge failed 3 time(s); last: {cause}")
    assert grade["note"] == grade["judge_error"]
    assert grade["breakdown"] == {"DB": 1.0, "NL_ASSERTION": 0.0}


def test_gold_actions_that_fail_to_replay_still_grade(tmp_path: Path) -> None:
    """A gold action the tools refuse is an error result when the gold DB is built (as in the
    reference), not an exception: the episode is graded against the DB it leaves."""
    record = load_task_set("tau2")["17"].raw
    record["evaluation_criteria"]["actions"] = [
        {"action_id": "a", "name": "no_such_tool", "arguments": {}},
        {"action_id": "b", "name": "cancel_reservation", "arguments": {"reservation_id": 7}},
    ]
    record["evaluation_criteria"]["communicate_info"] = []
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([record]))
    env = gym.make("AirlineScripted-v0", task="17", tasks=str(path))
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(_done())
    assert (reward, terminated, info["termination_reason"]) == (1.0, True, "agent_stop")
    assert info["reward_info"]["db_match"] is True
    assert [c["met"] for c in info["reward_info"]["action_checks"]] == [False, False]


def test_the_adapters_report_the_failure(tmp_path: Path) -> None:
    """The rollout summary (SkyRL, verl, Inspect, verifiers), TRL's tool env and the OpenEnv
    environment all step the env: each reports the failed grade, none raises."""
    from airline_gym.integrations.episode_summary import episode_summary
    from airline_gym.integrations.trl import AirlineToolEnv

    settings: dict[str, Any] = {
        "user": "scripted",
        "task": TASK,
        "reward_basis": ["DB", "NL_ASSERTION"],
        "judge": BrokenJudge(),
    }
    env = _judged_env(BrokenJudge()).unwrapped
    env.reset(seed=0)
    env.step(_done())
    summary = episode_summary(env, seed=0)
    assert (summary["reward"], summary["termination_reason"]) == (0.0, "agent_error")
    assert summary["error"].startswith(BROKEN_PARSER)
    assert summary["reward_info"]["note"] == summary["error"]

    trl_env = AirlineToolEnv(**settings)
    trl_env.reset(task_id=TASK, seed=0)
    trl_env.done()  # type: ignore[attr-defined]  (installed from the env's tools)
    assert trl_env.get_reward() == 0.0
    assert trl_env.info["termination_reason"] == "agent_error"
    assert trl_env.info["error"].startswith(BROKEN_PARSER)

    optional_libs.require("openenv")
    from airline_gym.integrations.openenv import AirlineAction, AirlineOpenEnv

    server_env = AirlineOpenEnv(**settings)
    server_env.reset(seed=0)
    observation = server_env.step(AirlineAction(message=_done()))
    assert (observation.reward, observation.terminated, observation.done) == (0.0, True, True)
    assert observation.info["error"].startswith(BROKEN_PARSER)
