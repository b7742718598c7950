"""Turn an intent and the policy's decisions into a task record in tau2's format.

Two gradings (issue #29):

``strict`` (the default)
    A task whose decisions leave the DB unchanged for some request (a refusal, a transfer, an
    answer, a declined offer) carries the lookups those decisions depend on as gold actions and
    has ``ACTION`` in its ``reward_basis``: an agent must have looked before it refuses. (The
    lookups behind a write are not required: the DB shows the write; nor is a read of a
    reservation the task's own booking made.) Every basis is DB x COMMUNICATE (x ACTION): no
    judge needed. ``airline_gym.checks`` lists the strict checks our grader adds (what the agent
    did: only the gold's writes, each confirmed, the customer settled, the figures told; see
    :mod:`airline_gym.domain.strict_grading`). Doing nothing scores 0 on every strict task.
``benchmark``
    Graded as the 50 benchmark tasks are: DB x COMMUNICATE, gold actions are the writes only.

Generated records carry a top-level ``"airline_gym"`` key (kinds, outcomes, grading, the
intent) that tau2's ``Task`` model ignores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airline_gym.domain.decisions import Call, Decision, Solution
from airline_gym.domain.intents import QUESTIONS, Intent, Request
from airline_gym.domain.task_meta import STRICT_CHECK_NAMES

__all__ = ["GRADINGS", "NO_DB_CHANGE", "assemble", "changes_db", "gold_actions"]

GRADINGS: tuple[str, ...] = ("strict", "benchmark")
TRANSFER = "transfer_to_human_agents"
#: Outcomes that leave the DB as it was.
NO_DB_CHANGE = frozenset({"refused", "transfer", "declined"})

Instructions = Callable[[Intent, Solution], Mapping[str, Any]]


def changes_db(decision: Decision) -> bool:
    """Whether a decision writes to the DB (a transfer does not)."""
    return any(call.name != TRANSFER for call in decision.writes)


def _action(task_id: str, k: int, call: Call, read: bool) -> dict[str, Any]:
    action: dict[str, Any] = {
        "action_id": f"{task_id}_{k}",
        "name": call.name,
        "arguments": dict(call.arguments),
        "info": None,
    }
    if call.name == TRANSFER:  # the summary is free text: match the name only
        action["compare_args"] = []
    elif read:
        action["compare_args"] = sorted(call.arguments)
    return action


def gold_actions(
    task_id: str, solution: Solution, grading: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """The gold actions and the reward basis of one task under ``grading``."""
    if grading not in GRADINGS:
        raise ValueError(f"unknown grading {grading!r} (one of {', '.join(GRADINGS)})")
    if grading == "benchmark":
        calls = [(c, False) for c in solution.writes]
        return [_action(task_id, k, c, r) for k, (c, r) in enumerate(calls)], ["DB", "COMMUNICATE"]
    looks = [d for d in solution.decisions if not changes_db(d)]
    unique: list[Call] = []
    for read in (r for d in looks for r in d.reads):
        if read not in unique:
            unique.append(read)
    reads = [(c, True) for c in unique]
    calls = reads + [(c, False) for c in solution.writes]
    basis = ["DB", "COMMUNICATE", "ACTION"] if looks else ["DB", "COMMUNICATE"]
    return [_action(task_id, k, c, r) for k, (c, r) in enumerate(calls)], basis


def _what(request: Request) -> str:
    res = f" of reservation {request.reservation_id}" if request.reservation_id else ""
    texts = {
        "book": "the new booking",
        "cancel": f"the cancellation{res}",
        "change_flights": f"the flight change{res}",
        "change_cabin": f"the cabin change{res}",
        "add_bags": f"the added bags{res}",
        "edit_passenger": f"the passenger update{res}",
        "change_count": f"the change in the number of passengers{res}",
        "add_insurance": f"adding travel insurance to reservation {request.reservation_id}",
        "compensation": f"compensation for flight {request.flight_number} on {request.flight_date}",
        "info": QUESTIONS.get(request.question or "", "the information asked for"),
    }
    return texts[request.kind]


def nl_assertions(intent: Intent, solution: Solution) -> list[str]:
    """One assertion per decision, stating refusals and transfers too."""
    out = []
    for request, decision in zip(intent.requests, solution.decisions, strict=True):
        why = f" ({decision.clause})" if decision.clause else ""
        if decision.outcome == "refused":
            out.append(f"Agent should refuse {_what(request)}{why}.")
        elif decision.outcome == "transfer":
            out.append(
                f"Agent should transfer the customer to a human agent for {_what(request)}{why}."
            )
        elif decision.outcome == "declined":
            out.append(
                f"Agent should make no change for {_what(request)}: the customer declines{why}."
            )
        elif request.kind == "info":
            said = ", ".join(decision.say)
            out.append(f"Agent should tell the customer {_what(request)}: {said}.")
        else:
            amount = f" (amount: ${decision.amount})" if decision.amount is not None else ""
            out.append(f"Agent should carry out {_what(request)}{amount}{why}.")
    return out


def assemble(
    task_id: str,
    intent: Intent,
    solution: Solution,
    instructions: Mapping[str, Any],
    grading: str = "strict",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The task record: tau2's fields, plus ``"airline_gym"`` (kinds, outcomes, grading, intent)."""
    if len(solution.decisions) != len(intent.requests):
        raise ValueError("the solution has one decision per request")
    actions, basis = gold_actions(task_id, solution, grading)
    outcomes = [d.outcome for d in solution.decisions]
    kinds = list(intent.kinds)
    clauses = sorted({d.clause for d in solution.decisions if d.clause})
    purpose = "; ".join(f"{k}: {o}" for k, o in zip(kinds, outcomes, strict=True))
    return {
        "id": task_id,
        "description": {
            "purpose": f"Generated task ({purpose}).",
            "relevant_policies": "\n".join(clauses) or None,
            "notes": f"airline-gym generate, grading {grading}",
        },
        "user_scenario": {
            "persona": None,
            "instructions": {"domain": "airline", **dict(instructions)},
        },
        "initial_state": None,
        "evaluation_criteria": {
            "actions": actions,
            "communicate_info": list(solution.say),
            "nl_assertions": nl_assertions(intent, solution),
            "reward_basis": basis,
        },
        "annotations": None,
        "airline_gym": {
            "kinds": kinds,
            "outcomes": outcomes,
            "changes_db": any(changes_db(d) for d in solution.decisions),
            "grading": grading,
            **({"checks": list(STRICT_CHECK_NAMES)} if grading == "strict" else {}),
            **dict(extra or {}),
            "intent": intent.to_json(),
        },
    }


def sequence_key(values: Sequence[Any]) -> str:
    """A stable text key for deduplication."""
    import json

    return json.dumps(values, sort_keys=True, separators=(",", ":"))
