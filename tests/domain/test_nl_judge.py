"""The NL-assertion judge against the reference's ``NLAssertionsEvaluator``.

Both judges talk to the same recording OpenAI-compatible server on 127.0.0.1: the reference's
evaluator (installed ``tau2``, its model and arguments pointed at the server) and ours
(:func:`~airline_gym.env.judge.make_judge`: our LLM client). Asserted: identical request bodies
for the same
conversation (a scripted episode of our env, and real recorded runs), identical verdicts from
identical replies, and, for replies the reference cannot read, that ours cannot either (and
records why instead of scoring a silent zero). The prompt is the package's text, never ours.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airline_gym.domain.grading import grade
from airline_gym.domain.nl_assertions import (
    JudgeReplyError,
    NLVerdict,
    judge_nl_assertions,
    judge_request,
    parse_verdicts,
)
from airline_gym.domain.nl_judge_prompt import judge_prompt
from airline_gym.domain.tasks import load_task_set
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.env.judge import make_judge
from airline_gym.testing.openai_server import OpenAIServer, Reply

REPO = Path(__file__).resolve().parents[2]
_HERE = Path(__file__).resolve()
SHARED = next((p / "shared" for p in _HERE.parents if (p / "shared").is_dir()), _HERE / "absent")
# A real run graded with NL assertions (its recorded verdicts came from the reference's judge).
JUDGED_RUN = (
    SHARED / "trajectories" / "t2old__lb-nvidia-toolorchestra__orchestrator__user-gpt-5.json"
)
JUDGE_MODEL = "openai/judge-test"


def _verdict_json(assertions: list[str], met: list[Any], why: str = "because") -> str:
    results = [
        {"expectedOutcome": a, "reasoning": f"{why} {i}", "metExpectation": m}
        for i, (a, m) in enumerate(zip(assertions, met, strict=True))
    ]
    return json.dumps({"results": results})


@pytest.fixture(scope="module")
def evaluator() -> Iterator[Any]:
    """The reference's evaluator class (its module's judge settings restored afterwards)."""
    pytest.importorskip("tau2.evaluator.evaluator_nl_assertions")
    from airline_gym.testing.reference import import_reference

    import_reference()  # the reference's imports, offline and quiet
    import tau2.evaluator.evaluator_nl_assertions as module

    saved = module.DEFAULT_LLM_NL_ASSERTIONS, module.DEFAULT_LLM_NL_ASSERTIONS_ARGS
    yield module
    module.DEFAULT_LLM_NL_ASSERTIONS, module.DEFAULT_LLM_NL_ASSERTIONS_ARGS = saved


def _reference_judge(module: Any, url: str, messages: list[Any], assertions: list[str]) -> Any:
    """The reference's verdict list (or the exception it raises), its judge at ``url``."""
    module.DEFAULT_LLM_NL_ASSERTIONS = JUDGE_MODEL
    module.DEFAULT_LLM_NL_ASSERTIONS_ARGS = {"temperature": 0.0, "api_base": url, "api_key": "x"}
    try:
        checks = module.NLAssertionsEvaluator.evaluate_nl_assertions(messages, assertions)
    except Exception as exc:
        return exc
    return [c.model_dump(mode="json") for c in checks]


def _ours(url: str, messages: list[dict[str, Any]], assertions: list[str], **kw: Any) -> Any:
    verdict = judge_nl_assertions(
        make_judge(JUDGE_MODEL, {"api_base": url}), assertions, messages, **kw
    )
    return verdict


def _episode_transcript(task_id: str) -> list[dict[str, Any]]:
    """A short scripted episode of our env: text, text with a tool call, a tool call alone,
    and a stop."""
    env = AirlineEnv(tasks="tau2", user="scripted", task=task_id)
    env.reset(seed=0)
    env.step({"role": "assistant", "content": "Sure, what is your user id?"})
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_user_details", "arguments": '{"user_id": "mia_li_3668"}'},
    }
    env.step({"role": "assistant", "content": "Let me look.", "tool_calls": [call]})
    env.step({"role": "assistant", "content": None, "tool_calls": [{**call, "id": "c2"}]})
    env.step({"role": "assistant", "content": "I cannot do that, sorry. ###STOP###"})
    assert env.episode is not None and env.episode.done
    return env.episode.transcript()


# --- the prompt ------------------------------------------------------------------------------
def test_the_prompt_is_the_packages_text_and_not_in_our_source() -> None:
    prompt = judge_prompt()
    assert "expectedOutcome" in prompt.system and "metExpectation" in prompt.system
    user = prompt.user("assistant: hi", ["A", "B"])
    assert "assistant: hi" in user and "['A', 'B']" in user
    first_line = next(line.strip() for line in prompt.system.splitlines() if len(line) > 40)
    for path in (REPO / "airline_gym").rglob("*.py"):
        assert first_line not in path.read_text(encoding="utf-8"), path


# --- request bodies and verdicts against the reference ---------------------------------------
def test_same_request_body_and_verdicts_for_an_episode_of_our_env(evaluator: Any) -> None:
    from airline_gym.testing.reference import import_reference, to_reference_messages

    task = load_task_set("tau2")["5"]
    transcript = _episode_transcript(task.id)
    assertions = list(task.nl_assertions)
    reply = _verdict_json(assertions, [True] + [False] * (len(assertions) - 1))
    with OpenAIServer(default=Reply(reply)) as server:
        ref_messages = to_reference_messages(import_reference(), transcript)
        theirs = _reference_judge(evaluator, server.base_url, ref_messages, assertions)
        ours = _ours(server.base_url, transcript, assertions)
        assert len(server.requests) == 2
        assert server.requests[0] == server.requests[1]
    assert not isinstance(theirs, Exception), theirs
    assert [vars(c) for c in ours.checks] == theirs
    assert ours.error is None and ours.reward == 0.0
    body = server.requests[1]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["temperature"] == 0.0 and "tools" not in body
    conversation = body["messages"][1]["content"]
    assert "\nassistant: None\ntool: " in conversation  # the tool-call-only message


@pytest.mark.skipif(not JUDGED_RUN.is_file(), reason="../shared/trajectories is absent")
def test_real_runs_give_the_same_requests_and_reproduce_their_recorded_verdicts(
    evaluator: Any,
) -> None:
    """Three recorded simulations judged by the reference's judge: replaying each recorded
    verdict as the judge's reply gives both sides the recorded ``nl_assertions``."""
    from tau2.data_model.simulation import SimulationRun

    sims = json.loads(JUDGED_RUN.read_text(encoding="utf-8"))["simulations"][:3]
    for sim in sims:
        recorded = sim["reward_info"]["nl_assertions"]
        assertions = [c["nl_assertion"] for c in recorded]
        reply = json.dumps(
            {
                "results": [
                    {
                        "expectedOutcome": c["nl_assertion"],
                        "reasoning": c["justification"],
                        "metExpectation": c["met"],
                    }
                    for c in recorded
                ]
            }
        )
        with OpenAIServer(default=Reply(reply)) as server:
            run = SimulationRun.model_validate(sim)
            theirs = _reference_judge(evaluator, server.base_url, run.messages, assertions)
            ours = _ours(server.base_url, sim["messages"], assertions)
            assert server.requests[0] == server.requests[1], sim["id"]
        assert theirs == recorded
        assert [vars(c) for c in ours.checks] == recorded


REPLIES: dict[str, Any] = {
    "met_as_text": {
        "results": [{"expectedOutcome": "A", "reasoning": "r", "metExpectation": "yes"}]
    },
    "met_as_number": {"results": [{"expectedOutcome": "A", "reasoning": "r", "metExpectation": 0}]},
    "met_unreadable": {
        "results": [{"expectedOutcome": "A", "reasoning": "r", "metExpectation": "maybe"}]
    },
    "met_two": {"results": [{"expectedOutcome": "A", "reasoning": "r", "metExpectation": 2}]},
    "no_results_key": {"verdict": "fine"},
    "empty_results": {"results": []},
    "results_null": {"results": None},
    "results_object": {"results": {"expectedOutcome": "A"}},
    "missing_reasoning": {"results": [{"expectedOutcome": "A", "metExpectation": True}]},
    "reasoning_number": {
        "results": [{"expectedOutcome": "A", "reasoning": 3, "metExpectation": True}]
    },
    "top_level_list": [{"expectedOutcome": "A", "reasoning": "r", "metExpectation": True}],
    "not_json": "The agent did well.",
    "fenced": '```json\n{"results": []}\n```',
}


@pytest.mark.parametrize("case", list(REPLIES))
def test_the_same_reply_gives_the_same_verdict_or_the_same_refusal(
    evaluator: Any, case: str
) -> None:
    value = REPLIES[case]
    content = value if isinstance(value, str) else json.dumps(value)
    task = load_task_set("tau2")["5"]
    transcript = _episode_transcript(task.id)
    from airline_gym.testing.reference import import_reference, to_reference_messages

    with OpenAIServer(default=Reply(content)) as server:
        ref_messages = to_reference_messages(import_reference(), transcript)
        theirs = _reference_judge(evaluator, server.base_url, ref_messages, ["A"])
        ours = _ours(server.base_url, transcript, ["A"], attempts=2)
        asked = len(server.requests)
    if isinstance(theirs, Exception):
        assert ours.error is not None and ours.reward == 0.0, case
        assert asked == 1 + 2  # the reference once; ours asked again, then recorded the cause
        with pytest.raises(JudgeReplyError):
            parse_verdicts(content)
    else:
        assert ours.error is None, (case, ours.error)
        assert [vars(c) for c in ours.checks] == theirs
        assert ours.reward == float(all(c["met"] for c in theirs))


# --- failures are recorded causes -------------------------------------------------------------
def test_a_judge_that_keeps_failing_is_a_recorded_cause() -> None:
    task = load_task_set("tau2")["5"]
    transcript = _episode_transcript(task.id)
    with OpenAIServer(default=Reply(fault="400")) as server:
        verdict = _ours(server.base_url, transcript, list(task.nl_assertions), attempts=2)
    assert verdict.error is not None and "2 time(s)" in verdict.error
    db = AirlineEnv(tasks="tau2", user="scripted").base.fork()
    graded = grade(task, db, transcript, "agent_stop", ("NL_ASSERTION",), verdict)
    assert graded.reward == 0.0 and graded.judge_error == verdict.error
    assert graded.note == verdict.error and graded.nl_assertions is None


def test_no_assertions_means_no_request_and_reward_one() -> None:
    verdict = judge_nl_assertions(
        make_judge(JUDGE_MODEL, {"api_base": "http://127.0.0.1:9"}), [], []
    )
    assert verdict == NLVerdict(note="No nl_assertions to evaluate") and verdict.reward == 1.0


def test_request_is_built_from_ours_or_tau2_messages_alike() -> None:
    """Our OpenAI-format transcript and its tau2 form (a results file) render the same."""
    from airline_gym.harness.results import tau2_messages

    transcript = _episode_transcript("5")
    assert judge_request(["A"], transcript) == judge_request(["A"], tau2_messages(transcript))
