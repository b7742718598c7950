"""Our action checks equal the reference's ``ActionEvaluator`` on a corpus the reference graded.

The corpus: for each of the 50 tasks, trajectories built from its gold actions and perturbed
the ways that decide a match (spec 4.4): exact calls, an argument dropped (a call that omits
arguments still matches, since only the call's own keys are compared), an argument changed, an
extra argument, integers sent as floats, nested lists reversed, only half the calls, no call,
and the gold calls made by the customer (``UserMessage`` tool calls count too). Tool results
come from the reference's own environment. The reference grades each simulation
(``evaluate_simulation``); ours is graded twice, as ``regrade`` grades a results file and, for
the agent-side variants, live in :class:`AirlineEnv` as ``eval`` records it. The
``action_checks`` of ``reward_info`` must be identical (JSON), as must the ``ACTION`` reward.
The real runs in ../shared/trajectories are checked against their recorded action checks in
tests/harness/test_regrade.py.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest

from airline_gym.domain.tasks import GoldAction, Task, load_task_set
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.harness.regrade import regrade_simulation
from airline_gym.harness.results import reward_info

pytestmark = [
    pytest.mark.reference,
    pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"),
]
pytest.importorskip("tau2.evaluator.evaluator_action")

from airline_gym.testing.reference import import_reference  # noqa: E402
from airline_gym.testing.soak_reference import ReferenceReplayer  # noqa: E402

Call = tuple[str, dict[str, Any]]


def _floats(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


def _changed(args: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(args)
    for key, value in out.items():
        if isinstance(value, str):
            out[key] = value + "X"
            break
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value + 1
            break
    return out


def _reversed_lists(args: dict[str, Any]) -> dict[str, Any]:
    return {k: list(reversed(v)) if isinstance(v, list) else v for k, v in args.items()}


def _each(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Task], list[Call]]:
    return lambda task: [(a.name, change(copy.deepcopy(a.arguments))) for a in task.actions]


def _half(task: Task) -> list[Call]:
    gold: tuple[GoldAction, ...] = task.actions
    calls = [(a.name, copy.deepcopy(a.arguments)) for a in gold[: len(gold) // 2]]
    return [*calls, ("get_user_details", {"user_id": "mia_li_3668"})]


#: variant -> the agent's calls for a task
VARIANTS: dict[str, Callable[[Task], list[Call]]] = {
    "gold": _each(lambda a: a),
    "dropped": _each(lambda a: dict(list(a.items())[:-1])),
    "changed": _each(_changed),
    "extra": _each(lambda a: {**a, "note": "extra"}),
    "floats": _each(_floats),
    "reversed_lists": _each(_reversed_lists),
    "half": _half,
    "none": lambda task: [],
}
USER_VARIANT = "gold_by_customer"  # the gold calls made by the customer (tau2 format only)


@cache
def _ref() -> Any:
    return import_reference()


@cache
def _replayer() -> ReferenceReplayer:
    return ReferenceReplayer()


@cache
def _ref_tasks() -> dict[str, Any]:
    return {t.id: t for t in _ref().get_tasks()}


def _tasks() -> list[Task]:
    return list(load_task_set("tau2"))


def _simulation(task: Task, variant: str) -> Any:
    """A reference ``SimulationRun``: greeting, request, the calls with the reference's tool
    results, a closing text and the customer's stop."""
    ref, replayer = _ref(), _replayer()
    by_customer = variant == USER_VARIANT
    calls = VARIANTS["gold" if by_customer else variant](task)
    requestor = "user" if by_customer else "assistant"
    outputs = replayer.replay(calls)
    messages: list[Any] = [
        ref.AssistantMessage(role="assistant", content="Hi! How can I help you today?"),
        ref.UserMessage(role="user", content="I need help."),
    ]
    for i, ((name, args), (content, error)) in enumerate(zip(calls, outputs, strict=True)):
        call = ref.ToolCall(id=f"c{i}", name=name, arguments=args, requestor=requestor)
        if by_customer:
            messages.append(ref.UserMessage(role="user", content=None, tool_calls=[call]))
        else:
            messages.append(ref.AssistantMessage(role="assistant", content=None, tool_calls=[call]))
        messages.append(
            ref.ToolMessage(
                id=f"c{i}", role="tool", content=content, requestor=requestor, error=error
            )
        )
    messages += [
        ref.AssistantMessage(role="assistant", content="Is there anything else?"),
        ref.UserMessage(role="user", content="No. ###STOP###"),
    ]
    return ref.SimulationRun(
        id=f"{task.id}-{variant}",
        task_id=task.id,
        start_time="",
        end_time="",
        duration=0.0,
        termination_reason=ref.TerminationReason.USER_STOP,
        messages=messages,
    )


def _graded(task: Task, variant: str, evaluation: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the simulation as a results file holds it, the reference's reward_info as JSON)."""
    ref = _ref()
    simulation = _simulation(task, variant)
    info = ref.evaluate_simulation(
        simulation=simulation,
        task=_ref_tasks()[task.id],
        evaluation_type=getattr(ref.EvaluationType, evaluation),
        solo_mode=False,
        domain="airline",
    )
    return simulation.model_dump(mode="json"), info.model_dump(mode="json")


def _ours_regraded(task: Task, sim: dict[str, Any]) -> dict[str, Any]:
    result = regrade_simulation(sim, task)
    assert result.grade is not None, result.error
    return reward_info(result.grade, task, sim["messages"])


def _ours_live(task: Task, variant: str) -> dict[str, Any]:
    env = AirlineEnv(tasks="tau2", user="scripted", task=task.id, max_errors=100)
    env.reset(seed=0)
    for i, (name, args) in enumerate(VARIANTS[variant](task)):
        function = {"name": name, "arguments": json.dumps(args)}
        call = {"id": f"c{i}", "type": "function", "function": function}
        env.step({"role": "assistant", "content": None, "tool_calls": [call]})
    done = {"id": "end", "type": "function", "function": {"name": "done", "arguments": "{}"}}
    *_, info = env.step({"role": "assistant", "content": None, "tool_calls": [done]})
    assert env.episode is not None
    return reward_info(info["reward_info"], task, env.episode.transcript())


def _cases() -> Iterator[tuple[str, str]]:
    for task in _tasks():
        for variant in [*VARIANTS, USER_VARIANT]:
            yield task.id, variant


def test_the_corpus_reaches_every_kind_of_outcome() -> None:
    """Not a vacuous corpus: matches and misses, partial and complete, and tasks with no
    gold actions (whose checks the reference leaves null)."""
    outcomes: set[Any] = set()
    for task in _tasks()[::7]:
        for variant in ("gold", "dropped", "changed", "none"):
            _, theirs = _graded(task, variant, "ACTION")
            checks = theirs["action_checks"]
            outcomes.add(None if checks is None else tuple(c["action_match"] for c in checks))
    assert None in outcomes
    assert any(o and all(o) for o in outcomes) and any(o and not any(o) for o in outcomes)


@pytest.mark.parametrize("task_id", [t.id for t in load_task_set("tau2")])
def test_action_checks_equal_the_reference_action_evaluator(task_id: str) -> None:
    task = load_task_set("tau2")[task_id]
    for variant in [*VARIANTS, USER_VARIANT]:
        sim, theirs = _graded(task, variant, "ACTION")
        ours = _ours_regraded(task, sim)
        assert ours["action_checks"] == theirs["action_checks"], variant
        assert (ours["info"]["action"] or None) == (theirs["info"] or None), variant
        result = regrade_simulation(sim, task, reward_basis=("ACTION",))
        assert result.reward == theirs["reward"], variant
        if variant != USER_VARIANT:  # our env's customer makes no tool calls
            assert _ours_live(task, variant)["action_checks"] == theirs["action_checks"], variant


@pytest.mark.long
def test_full_reward_info_matches_the_reference_evaluation() -> None:
    """``evaluate_simulation(ALL)`` (DB replay included) on every other task, one variant per
    task in rotation: action checks, DB verdict, breakdown and reward all equal ours."""
    variants = list(VARIANTS)
    for i, task in enumerate(_tasks()[::2]):
        variant = variants[i % len(variants)]
        sim, theirs = _graded(task, variant, "ALL")
        ours = _ours_regraded(task, sim)
        where = f"task {task.id} {variant}"
        assert ours["action_checks"] == theirs["action_checks"], where
        assert ours["info"]["action"] == theirs["info"]["action"], where
        assert ours["db_check"] == theirs["db_check"], where
        assert ours["reward"] == theirs["reward"], where
        assert ours["reward_breakdown"] == theirs["reward_breakdown"], where
