"""No silent zero from grading: arguments nested too deeply are an ``Error: ...`` tool result and
grade like any other episode; an exception while grading an ended episode is a recorded cause
(the env ends the episode as ``agent_error``; see ``tests/env/test_grading_never_raises.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from airline_gym.domain.transcript import decode_arguments
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.results import Results, summarize


class _BrokenReply:
    """A judge reply whose text cannot be read: what grading itself cannot survive."""

    @property
    def content(self) -> str:
        raise RuntimeError("the reply broke")


class BrokenJudge:
    """A chat model passed as the judge whose every reply breaks when read."""

    def complete(self, messages: list[dict[str, Any]]) -> _BrokenReply:
        return _BrokenReply()


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class DeepArguments:
    """Calls a tool with arguments nested ``depth`` deep, then ``done``."""

    def __init__(self, depth: int) -> None:
        self.depth, self.turn = depth, 0

    def reset(self, info: dict[str, Any]) -> None:
        self.turn = 0

    def act(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        self.turn += 1
        if self.turn == 1:
            nested = "[" * self.depth + "]" * self.depth
            call = _call("c1", "get_user_details", f'{{"user_id": {nested}}}')
            return {"role": "assistant", "content": "Let me look.", "tool_calls": [call]}
        return {"role": "assistant", "content": None, "tool_calls": [_call("c2", "done", "{}")]}


def test_undecodable_arguments_are_kept_as_text() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert decode_arguments(deep) == deep
    assert decode_arguments('{"a": 1}') == {"a": 1}


@pytest.mark.parametrize("protocol", ["gym", "leaderboard"])
@pytest.mark.parametrize("depth", [1_000, 5_000, 50_000])
def test_deeply_nested_arguments_get_an_error_result_and_a_real_grade(
    tmp_path: Path, depth: int, protocol: str
) -> None:
    out = tmp_path / "run.json"
    config = EvalConfig(task_ids=["17"], protocol=protocol, max_steps=6)
    results = evaluate(DeepArguments(depth), config, out=out)
    (sim,) = Results.load(out).simulations
    assert sim == json.loads(json.dumps(results.simulations[0]))
    tool = next(m for m in sim["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("Error: invalid arguments for get_user_details:")
    # gym: done ends it (a graded ending: task 17's DB is untouched, so 0 with a DB verdict);
    # leaderboard: done is an unknown tool and the run stops at max_steps (scored 0, as tau2)
    expected = {"gym": "agent_stop", "leaderboard": "max_steps"}[protocol]
    assert sim["termination_reason"] == expected
    assert sim["reward_info"]["reward"] == 0.0
    if protocol == "gym":
        assert sim["reward_info"]["db_check"] == {"db_match": False, "db_reward": 0.0}
    else:
        assert "Termination reason: max_steps" in sim["reward_info"]["info"]["note"]


@pytest.mark.parametrize("concurrency", [1, 2])
def test_an_exception_while_grading_an_ended_episode_is_a_recorded_cause(
    tmp_path: Path, concurrency: int
) -> None:
    """The judge's reply cannot be read (its ``content`` raises) so grading raises, on the sync
    (1) and the async (2) loop: the env ends the episode itself, the results file records the
    cause."""
    out = tmp_path / "run.json"
    config = EvalConfig(
        task_ids=["17", "3"],
        reward_basis=("DB", "NL_ASSERTION"),
        judge=BrokenJudge(),
        concurrency=concurrency,
    )
    evaluate("gold", config, out=out)
    results = Results.load(out)
    assert len(results.simulations) == 2
    for sim in results.simulations:
        assert sim["termination_reason"] == "agent_error"
        assert sim["reward_info"]["reward"] == 0.0
        # task 3's customer hangs up once its question is answered (user_stop)
        cause = r"grading the episode \(ended: (agent|user)_stop\) failed: RuntimeError: the reply"
        assert re.match(cause, sim["reward_info"]["info"]["note"])
        assert sim["reward_info"]["info"]["error"] == sim["reward_info"]["info"]["note"]
        assert any(m["role"] == "tool" for m in sim["messages"])  # the transcript is kept
    summary = summarize(results)  # a failed grade counts as 0, as any agent_error
    assert summary["pass_hat_k"] == {1: 0.0} and summary["mean_reward"] == 0.0
    assert summary["terminations"] == {"agent_error": 2} and len(summary["errors"]) == 2
    assert summary["infrastructure_errors"] == 0
