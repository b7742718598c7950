"""The gold actions played as a dialogue that follows the policy: warm-start demonstrations.

:class:`DialogueGoldAgent` makes the task's gold calls, in order, but talks as the policy asks an
agent to: before each write it lists the details and asks for a yes; after it, it says what was
done; it refuses what the policy refuses (again after a push-back); it says the figures the
customer asked for when the customer asks; it hands a transfer over with the fixed sentence; and
it ends by offering more help. The plan follows the customer's requests when the task has an
intent (each request's writes, or its refusal, in the customer's order). The words are ours;
what changes the DB is exactly the gold.

Against the scripted customer its episodes score what ``gold`` scores, and their transcripts are
what ``airline-gym warm-start`` turns into SFT data.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from airline_gym.agents.base import Action, text_message, tool_call_message
from airline_gym.agents.scripted import ScriptedAgent
from airline_gym.data import data_files
from airline_gym.domain.benchmarks import BENCHMARKS
from airline_gym.domain.database import PristineDB, load_pristine
from airline_gym.domain.intents import FlightRule, Intent, Request
from airline_gym.domain.tasks import DEFAULT_TASK_SET, GoldAction, Task, TaskSet, load_task_set
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.users.intent_source import granted_writes, task_intent

__all__ = ["HANDOFF", "DialogueGoldAgent", "dialogue_plan"]

HANDOFF = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
TRANSFER_TOOL = "transfer_to_human_agents"
#: The calls that act on the customer's behalf: the writes and the hand-off.
_ACTS = WRITE_TOOLS | {TRANSFER_TOOL}
CLOSING = "Is there anything else I can help you with?"
_REFUSE = {
    "cancel": "I'm sorry, but this reservation is not eligible for cancellation under our policy.",
    "change_flights": "I'm sorry, but our policy does not allow this flight change.",
    "change_cabin": "I'm sorry, but our policy does not allow this cabin change.",
    "add_bags": "I'm sorry, but I cannot make this baggage change under our policy.",
    "edit_passenger": "I'm sorry, but I cannot make this passenger change under our policy.",
    "change_count": "I'm sorry, but the number of passengers on a reservation cannot be changed.",
    "add_insurance": "I'm sorry, but insurance cannot be added after a reservation is booked.",
    "compensation": "I'm sorry, but this case is not eligible for compensation under our policy.",
    "book": "I'm sorry, but I cannot make this booking under our policy.",
}
_AGAIN = "I understand, but I'm not able to make an exception to the policy."


def _flights(args: dict[str, Any]) -> str:
    legs = args.get("flights") or []
    return ", ".join(f"{f.get('flight_number')} on {f.get('date')}" for f in legs)


def describe(name: str, args: dict[str, Any]) -> str:
    """A write's details as the agent lists them before asking for a yes."""
    rid = args.get("reservation_id", "")
    if name == "book_reservation":
        people = ", ".join(
            f"{p.get('first_name')} {p.get('last_name')}" for p in args.get("passengers") or []
        )
        pay = ", ".join(
            f"${m.get('amount')} from {m.get('payment_id')}"
            for m in args.get("payment_methods") or []
        )
        return (
            f"I'll book a {str(args.get('flight_type', '')).replace('_', '-')} reservation from "
            f"{args.get('origin')} to {args.get('destination')} in "
            f"{str(args.get('cabin', '')).replace('_', ' ')}: {_flights(args)}. Passengers: "
            f"{people}. {args.get('total_baggages')} checked bags "
            f"({args.get('nonfree_baggages')} paid). Travel insurance: {args.get('insurance')}. "
            f"Payment: {pay}."
        )
    if name == "cancel_reservation":
        return (
            f"I'll cancel reservation {rid}; the refund goes back to the original payment methods."
        )
    if name == "update_reservation_flights":
        return (
            f"I'll update reservation {rid} to {str(args.get('cabin', '')).replace('_', ' ')} "
            f"on {_flights(args)}, with any price difference on {args.get('payment_id')}."
        )
    if name == "update_reservation_baggages":
        return (
            f"I'll set reservation {rid} to {args.get('total_baggages')} checked bags in all "
            f"({args.get('nonfree_baggages')} of them paid), paid with {args.get('payment_id')}."
        )
    if name == "update_reservation_passengers":
        people = ", ".join(
            f"{p.get('first_name')} {p.get('last_name')} (born {p.get('dob')})"
            for p in args.get("passengers") or []
        )
        return f"I'll update the passenger details of reservation {rid} to: {people}."
    if name == "send_certificate":
        return f"I'll issue a travel certificate of ${args.get('amount')} to your account."
    return f"I'll make this change: {name}."


def done_text(name: str, args: dict[str, Any]) -> str:
    """What the agent says once a write went through."""
    rid = args.get("reservation_id", "")
    return {
        "book_reservation": "Your new reservation has been booked.",
        "cancel_reservation": f"Reservation {rid} has been cancelled.",
        "send_certificate": "The certificate has been issued to your account.",
    }.get(name, f"Reservation {rid} has been updated.")


class _Plan:
    """Builds the agent's turns: calls, confirmations, refusals and answers."""

    def __init__(self, task: Task, intent: Intent | None, base: PristineDB | None) -> None:
        self.base = base
        self.actions = list(task.actions)
        self.say = list(task.communicate_info)
        self.intent = intent
        self.turns: list[Action] = []
        self.next = 0

    def call(self, index: int, last_of_request: bool) -> None:
        action = self.actions[index]
        call = tool_call_message(action.name, dict(action.arguments), f"gold_{index}")
        if action.name == TRANSFER_TOOL:
            self.turns += [call, text_message(HANDOFF)]
        elif action.name in WRITE_TOOLS:
            args = dict(action.arguments)
            self.turns += [text_message(describe(action.name, args) + " Shall I proceed?"), call]
            if last_of_request:
                self.turns.append(text_message(done_text(action.name, args)))
        else:
            self.turns.append(call)

    def upto(self, last: int, writes: tuple[GoldAction, ...] = ()) -> None:
        final = max(
            (i for i in range(self.next, last + 1) if self.actions[i] in writes), default=-1
        )
        for index in range(self.next, last + 1):
            self.call(index, last_of_request=not writes or index == final)
        self.next = max(self.next, last + 1)

    def request(
        self, request: Request, writes: tuple[GoldAction, ...], offer: str | None = None
    ) -> None:
        pending = self.actions[self.next :]
        writes = tuple(w for w in writes if w in pending)
        if writes:
            last = max(i for i, a in enumerate(self.actions) if a in writes and i >= self.next)
            self.upto(last, writes)
            return
        # the lookups a refusal or an answer rests on come first (up to the next write)
        while self.next < len(self.actions) and self.actions[self.next].name not in _ACTS:
            self.call(self.next, last_of_request=False)
            self.next += 1
        if request.kind == "info":
            value = self.say.pop(0) if self.say else ""
            self.turns.append(text_message(f"The figure you asked about is {value}."))
        elif any(a.name == TRANSFER_TOOL for a in pending):
            return  # the transfer among the remaining calls answers it
        elif offer is not None:
            self.turns.append(text_message(offer))  # the customer declines it: over its budget
        else:
            refusal = _REFUSE.get(request.kind, "I'm sorry, but I cannot do that under our policy.")
            self.turns += [text_message(refusal)] + [text_message(_AGAIN)] * request.insist

    def build(self) -> list[Action]:
        if self.intent is not None:
            grants = granted_writes(self.intent.requests, self.actions)
            offers = _offers(self.intent, self.base)
            for i, (request, writes) in enumerate(zip(self.intent.requests, grants, strict=True)):
                self.request(request, writes, offers.get(i))
        self.upto(len(self.actions) - 1)
        if self.say:
            facts = "To be clear, here are the figures: " + ", ".join(self.say) + "."
            at = next(
                (i for i in range(len(self.turns) - 1, -1, -1) if _is_text(self.turns[i])), None
            )
            if at is not None and self.turns[at]["content"] != HANDOFF:
                self.turns[at] = text_message(f"{self.turns[at]['content']} {facts}")
            else:
                self.turns.append(text_message(facts))
        self.turns.append(text_message(CLOSING))
        return self.turns


def _is_text(action: Action) -> bool:
    return not action.get("tool_calls")


def _offers(intent: Intent, base: PristineDB | None) -> dict[int, str]:
    """Request index -> the proposal that shows the customer a request over its budget: the
    option its rule comes to (the policy solver's), which the customer declines itself."""
    capped = [
        i
        for i, r in enumerate(intent.requests)
        if r.max_total is not None or any(rule.max_price for rule in _rules(r))
    ]
    if not capped:
        return {}
    from airline_gym.taskgen.solver import SolverError, solve

    try:
        decisions = solve(base or load_pristine(), intent).decisions
    except SolverError:
        return {}
    out = {}
    for i in capped:
        decision = decisions[i]
        if decision.outcome == "declined" and "cap" in decision.clause and decision.details:
            out[i] = offer_text(intent.requests[i], decision.details)
    return out


def _rules(request: Request) -> list[FlightRule]:
    rules = [leg.rule for leg in request.legs]
    if request.trip is not None:
        rules += [r for r in (request.trip.outbound, request.trip.return_rule) if r]
    return rules


def offer_text(request: Request, details: Mapping[str, Any]) -> str:
    """A proposal of what the customer's request comes to, with the details it needs."""
    parts = [f"reservation {request.reservation_id}"] if request.reservation_id else []
    if details.get("flights"):
        parts.append(f"flights {_flights({'flights': details['flights']})}")
    if details.get("cabin"):
        parts.append(f"in {str(details['cabin']).replace('_', ' ')}")
    if details.get("total_bags") is not None:
        parts.append(f"{details['total_bags']} checked bags in all")
    if request.payment:
        parts.append("paid with " + " and ".join(p.payment_id for p in request.payment))
    return f"Your request comes to: {', '.join(parts)}. Shall I go ahead with it?"


def dialogue_plan(
    task: Task, intent: Intent | None = None, base: PristineDB | None = None
) -> list[Action]:
    """The agent's turns for ``task`` (following ``intent``'s requests when given; ``base``:
    the pristine DB, for what a request over the customer's budget comes to)."""
    return _Plan(task, intent, base).build()


class DialogueGoldAgent(ScriptedAgent):
    """Plays :func:`dialogue_plan` for the task of each episode, then ends as
    :class:`~airline_gym.agents.scripted.ScriptedAgent` does."""

    def __init__(
        self,
        tasks: TaskSet | str | os.PathLike[str] = DEFAULT_TASK_SET,
        data_dir: Any = None,
        benchmark: str | None = None,
    ) -> None:
        super().__init__([])
        self.data_dir = data_dir
        self.tasks = tasks if isinstance(tasks, TaskSet) else load_task_set(tasks, data_dir)
        #: Whose benchmark intents apply (default: the task set's own when it is a benchmark).
        self.benchmark = benchmark or (self.tasks.name if self.tasks.name in BENCHMARKS else None)

    def reset(self, info: dict[str, Any]) -> None:
        """Plan the episode of ``info["task_id"]``."""
        task = self.tasks[info["task_id"]]
        base = load_pristine(None if self.data_dir is None else data_files(self.data_dir).db)
        self.actions = dialogue_plan(task, task_intent(task, self.benchmark), base)
        super().reset(info)
