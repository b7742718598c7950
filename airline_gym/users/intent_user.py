"""A deterministic, offline customer that plays a task's structured intent.

:class:`IntentPlayer` is what ``user="scripted"`` (:class:`~airline_gym.users.ScriptedUser`)
runs when a task carries an :class:`~airline_gym.domain.intents.Intent` (generated tasks, and
benchmark tasks whose request has been written as one). Unlike the keyword customer it says no:

- it states its requests one at a time, in order, and answers what it is asked from its known
  info; an item of its unknown info gets "I don't remember" and is never offered;
- it says yes only to a proposal that matches its current request: another flight than its rule
  came to (the task's gold writes), another cabin, reservation or payment method, insurance or
  bags it did not ask for, or a change of another kind gets a no; over its budget cap
  (a request the gold grants no write) it declines;
- after a refusal it pushes back ``insist`` times, then accepts it and moves on;
- it ends (``###STOP###``) when every request is done, refused or declined, or when the agent
  stalls three times in a row (twice if impatient); ``###TRANSFER###`` when the agent says it
  transfers the customer to a human agent.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.intents import Intent, Request
from airline_gym.domain.prompts import STOP, TRANSFER
from airline_gym.domain.tasks import GoldAction, Task
from airline_gym.users.base import Dialogue
from airline_gym.users.intent_source import carries_intent, granted_writes, task_intent
from airline_gym.users.intent_words import (
    CONFIRM_RE,
    DONE_RE,
    FLIGHT_RE,
    HELP_RE,
    KIND_RE,
    MONEY_RE,
    MORE_RE,
    NUMBER_RE,
    REFUSAL_RE,
    cabin_said,
    detail_answers,
    say_request,
)
from airline_gym.users.scripted_rules import (
    IDENTITY_RULES,
    PAYMENT_ID_RE,
    RESERVATION_ID_RE,
    TRANSFER_RE,
    asking_parts,
)
from airline_gym.users.trips import trips

__all__ = ["IntentPlayer", "customer_for"]

#: Other kinds' words a proposal for a request of this kind may contain without being another
#: change (a booking has bags and a cabin; a flight change may book new flights, ...).
_COMPATIBLE: dict[str, frozenset[str]] = {
    "book": frozenset({"add_bags", "change_cabin", "add_insurance", "edit_passenger"}),
    "change_flights": frozenset({"book", "change_cabin"}),
    "change_cabin": frozenset({"book"}),
    "cancel": frozenset({"compensation"}),
    "compensation": frozenset({"cancel"}),
}
_YES = ("Yes, please go ahead.", "Yes, that's right.", "Yes, I confirm.")
_PUSH = (
    "I really need this. Could you make an exception just this once?",
    "Please check again; this matters a lot to me.",
)
_NUDGE = ("Could you help me with that?", "To be clear:", "Let me say it again:")
_SLOW = "I don't think we're getting anywhere. Never mind, goodbye. " + STOP
_DONE = "Thank you, that's everything I needed. " + STOP


def customer_for(
    task: Task, benchmark: str | None = None, max_turns: int = 30, data_dir: Any = None
) -> IntentPlayer | None:
    """The intent-playing customer of ``task``, or None when it has no intent.

    A generated task's customer can say every reservation id of its requests (unless its intent
    lists them as unknown); a benchmark task's customer only the ids its scenario names, and
    words any other reservation by its trip (read from the DB), as the benchmark's customers do.
    What a task's customer is (its intent, the gold writes of each request, the ids it can say)
    is worked out once per task; each call returns a fresh player of it.
    """
    key = (id(task), benchmark, max_turns, None if data_dir is None else str(data_dir))
    with _PLAYERS_LOCK:
        known = _PLAYERS.get(key)
        if known is not None:
            _PLAYERS.move_to_end(key)
    if known is not None and known[0] is task:
        template = known[1]
    else:
        template = _player_of(task, benchmark, max_turns, data_dir)
        with _PLAYERS_LOCK:  # the task is kept with its player: its id() is not reused
            _PLAYERS[key] = (task, template)
            while len(_PLAYERS) > _PLAYERS_KEPT:
                _PLAYERS.popitem(last=False)
    return None if template is None else template.fresh()


def _player_of(
    task: Task, benchmark: str | None, max_turns: int, data_dir: Any
) -> IntentPlayer | None:
    intent = task_intent(task, benchmark)
    if intent is None:
        return None
    if carries_intent(task):
        return IntentPlayer(intent, task.actions, max_turns)
    text = " ".join(str(v) for v in task.instructions.values() if v)
    named = frozenset(RESERVATION_ID_RE.findall(text))
    return IntentPlayer(intent, task.actions, max_turns, named, trips(data_dir))


#: The players :func:`customer_for` made, by task (most recent last, at most _PLAYERS_KEPT).
_PLAYERS: OrderedDict[tuple[Any, ...], tuple[Task, IntentPlayer | None]] = OrderedDict()
_PLAYERS_KEPT = 1024
_PLAYERS_LOCK = threading.Lock()


@dataclass
class _Progress:
    """Where the customer is in its current request."""

    index: int = 0
    pushed: int = 0
    confirmed: bool = False
    stalls: int = 0
    yeses: int = 0
    said: list[str] = field(default_factory=list)


class IntentPlayer:
    """One conversation's customer for ``intent``; ``actions`` are the task's gold actions."""

    def __init__(
        self,
        intent: Intent,
        actions: Sequence[GoldAction] = (),
        max_turns: int = 30,
        known_ids: frozenset[str] | None = None,
        describe: Callable[[str], str | None] | None = None,
    ) -> None:
        #: The reservation ids the customer can say (None: every id of its requests, unless
        #: ``reservation_ids`` is unknown); ``describe(id)`` words a trip whose id it cannot say.
        self.known_ids = known_ids
        self.describe = describe
        self.intent = intent
        self.max_turns = max_turns
        self.granted = granted_writes(intent.requests, actions)
        self.state = _Progress()

    def fresh(self) -> IntentPlayer:
        """A player of the same customer at the start of a conversation (what it knows is
        shared: none of it changes)."""
        player = copy.copy(self)
        player.state = _Progress()
        return player

    # -- what the customer knows ----------------------------------------------------------------

    def known(self, item: str) -> tuple[str, ...]:
        """The values of an identity item the customer knows (empty when it does not)."""
        if item in self.intent.unknown:
            return ()
        if item == "user_id":
            return (self.intent.user_id,)
        if item == "name":
            return (self.intent.name,)
        if item == "payment":
            request = self._current()
            return tuple(p.payment_id for p in request.payment) if request else ()
        value = self.intent.known.get(item, "")
        listed = [v.strip() for v in value.split(",") if v.strip()]
        if item != "reservation_ids":
            return tuple(listed)
        current = self._current()
        mine = current.reservation_id if current else None
        if self.known_ids is not None:
            listed = [v for v in listed if v in self.known_ids]
        if mine and self.knows_id(mine) and mine not in listed:
            listed.insert(0, mine)
        return tuple(listed)

    def knows_id(self, reservation_id: str | None) -> bool:
        """Whether the customer can say this reservation id (else it describes the trip)."""
        if not reservation_id or "reservation_ids" in self.intent.unknown:
            return False
        return self.known_ids is None or reservation_id in self.known_ids

    def _which(self, request: Request) -> str:
        rid = request.reservation_id
        if rid and self.knows_id(rid):
            return f"my reservation {rid}"
        trip = self.describe(rid) if rid and self.describe else None
        return f"my reservation {trip}" if trip else "my upcoming reservation"

    def _current(self) -> Request | None:
        requests = self.intent.requests
        return requests[self.state.index] if self.state.index < len(requests) else None

    # -- the conversation -------------------------------------------------------------------------

    def opening(self) -> str:
        """The first message: the first request, then the name and user id (when known)."""
        request = self._current()
        parts = [] if self.intent.persona.terse else ["Hi!"]
        parts.append(
            say_request(request, self._which(request)) if request else "I have a question."
        )
        if self.known("name"):
            parts.append(f"My name is {self.intent.name}.")
        if self.known("user_id"):
            parts.append(f"My user id is {self.intent.user_id}.")
        return self._say(" ".join(parts))

    def reply(self, dialogue: Dialogue) -> str:
        """The next customer message (see the module docstring).

        A function of the dialogue alone: the customer's progress through its requests is
        replayed from the dialogue's start at every call, so a repeated or edited call gives
        the reply that dialogue calls for.
        """
        self.state = _Progress()
        answer = self.opening() if not dialogue else ""
        for i, message in enumerate(dialogue):
            ends_turn = i + 1 == len(dialogue) or dialogue[i + 1].get("role") == "user"
            if message.get("role") == "assistant" and ends_turn:
                answer = self._reply_to(dialogue[: i + 1])
        return answer

    def _reply_to(self, dialogue: Dialogue) -> str:
        agent = [str(m.get("content") or "") for m in dialogue if m.get("role") == "assistant"]
        turns = sum(1 for m in dialogue if m.get("role") == "user")
        last = agent[-1] if agent else ""
        if TRANSFER_RE.search(last):
            return TRANSFER
        if turns == 0:
            return self.opening()
        if turns >= self.max_turns:
            return STOP
        request = self._current()
        if request is None:
            return _DONE
        answer = self._react(last, request)
        if answer is None:
            return self._stall(request)
        self.state.stalls = 0
        return self._say(answer)

    def _react(self, text: str, request: Request) -> str | None:
        """The answer to one agent message, or None when it gives the customer nothing to do."""
        asked = asking_parts(text)
        identity = self._identity(asked, text)
        if REFUSAL_RE.search(text):
            return self._refused(request)
        if request.kind == "info" and NUMBER_RE.search(text):
            return self._advance("Thanks, that's what I needed.")
        if CONFIRM_RE.search(asked):
            objection = self._objection(text, asked, request)
            if objection is not None:
                return objection
            self.state.confirmed = True
            self.state.yeses += 1
            return " ".join([*identity, _YES[(self.state.yeses - 1) % len(_YES)]])
        details = detail_answers(asked, request) if asked else []
        if identity or details:
            return " ".join([*identity, *details])
        if DONE_RE.search(text):
            return self._advance("Thank you!")
        if HELP_RE.search(text) and not self.state.confirmed:
            return say_request(request, self._which(request))
        if MORE_RE.search(text):
            if self.state.confirmed:
                return self._advance("Thanks.")
            return f"Yes: {say_request(request, self._which(request))}"
        return None

    def _recognised(self, asked: str) -> str | None:
        """The current request's reservation id if the agent's question names it (the customer
        recognises it when told, though it does not remember it)."""
        request = self._current()
        mine = request.reservation_id if request else None
        return mine if mine and mine in asked else None

    def _identity(self, asked: str, text: str) -> list[str]:
        answers = []
        current = self._current()
        mine = current.reservation_id if current else None
        recognised = None if self.knows_id(mine) else self._recognised(asked)
        if recognised:
            answers.append(f"Yes, {recognised} is the one.")
        for item, pattern, known, unknown in IDENTITY_RULES:
            if not pattern.search(asked):
                continue
            values = self.known(item)
            if item == "reservation_ids" and not values:
                if not self._recognised(asked):
                    answers.append("I don't remember the reservation id. Could you look it up?")
            elif not values:
                answers.append(unknown.replace("I don't know", "I don't remember"))
            elif any(v not in text for v in values):
                many = item == "reservation_ids" and len(values) > 1
                template = "My reservation ids are {}." if many else known
                answers.append(template.format(" and ".join(values)))
        return answers

    def _objection(self, text: str, asked: str, request: Request) -> str | None:
        """Why the customer says no to the proposal in ``text`` (None: it is what it wants)."""
        want = say_request(request, self._which(request))
        granted = self.granted[self.state.index]
        ids = set(RESERVATION_ID_RE.findall(asked)) - {request.reservation_id}
        if request.reservation_id and ids and request.reservation_id not in text:
            return f"No, that's not the reservation I mean. {want}"
        legs = [f for a in granted for f in a.arguments.get("flights") or []]
        flights = {f.get("flight_number") for f in legs}
        flights |= {n for leg in request.legs for n in leg.rule.flight_numbers}
        said = set(FLIGHT_RE.findall(text))
        if flights and said and not said & flights:
            return f"No, that's not the flight I want. {want}"
        cabin = request.cabin or next((a.arguments.get("cabin") for a in granted), None)
        cabins = cabin_said(asked)
        if cabin and cabins and cabin not in cabins and request.kind != "cancel":
            return f"No, I want {str(cabin).replace('_', ' ')}. {want}"
        paying = {p.payment_id for p in request.payment}
        named = set(PAYMENT_ID_RE.findall(text))
        if paying and named and not named <= paying:
            return f"No, I'd like to use {' and '.join(sorted(paying))} for this."
        wants_insurance = request.kind == "add_insurance" or (
            request.kind == "book" and request.insurance
        )
        if KIND_RE["add_insurance"].search(asked) and not wants_insurance:
            return "No, I don't want insurance."
        allowed = _COMPATIBLE.get(request.kind, frozenset()) | {request.kind}
        other = [k for k, rx in KIND_RE.items() if k not in allowed and rx.search(text)]
        own = KIND_RE.get(request.kind)
        if other and (own is None or not own.search(text)):
            return f"No, I don't want that. {want}"
        caps = [leg.rule.max_price for leg in request.legs] + [request.max_total]
        if request.trip is not None:
            caps += [request.trip.outbound.max_price]
            caps += [request.trip.return_rule.max_price] if request.trip.return_rule else []
        cap = min((c for c in caps if c), default=None)
        amounts = [float(m.replace(",", "")) for m in MONEY_RE.findall(text)]
        # the gold grants nothing for a capped request: its rule's price is over the cap
        if cap and not granted and (not amounts or min(amounts) > cap):
            return self._advance("No, that's more than I'm willing to pay.", declined=True)
        return None

    def _refused(self, request: Request) -> str:
        if self.state.pushed < request.insist:
            self.state.pushed += 1
            return _PUSH[(self.state.pushed - 1) % len(_PUSH)]
        return self._advance("I understand.", declined=True)

    def _advance(self, ack: str, declined: bool = False) -> str:
        """Close the current request and say the next one (or stop)."""
        self.state = _Progress(index=self.state.index + 1, said=self.state.said)
        request = self._current()
        if request is None:
            end = "Never mind then, thank you." if declined else "That's everything, thank you."
            return f"{ack} {end} {STOP}"
        return f"{ack} I also have another request. {say_request(request, self._which(request))}"

    def _stall(self, request: Request) -> str:
        self.state.stalls += 1
        limit = 3 if self.intent.persona.patient else 2
        if self.state.stalls >= limit:
            return _SLOW
        nudge = _NUDGE[(self.state.stalls - 1) % len(_NUDGE)]
        return self._say(f"{nudge} {say_request(request, self._which(request))}")

    def _say(self, text: str) -> str:
        """Remember what was said; never the same text as the two turns before."""
        said = self.state.said
        if len(said) >= 2 and said[-1] == said[-2] == text:
            text = f"As I said: {text}"
        said.append(text)
        return text
