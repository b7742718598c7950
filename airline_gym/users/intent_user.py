"""A deterministic, offline customer that plays a task's structured intent.

:class:`IntentPlayer` is what ``user="scripted"`` (:class:`~airline_gym.users.ScriptedUser`)
runs when a task carries an :class:`~airline_gym.domain.intents.Intent` (generated tasks, and
benchmark tasks whose request has been written as one). It decides from its own wishes and the
episode's live DB (handed over with :meth:`IntentPlayer.attach_db`), never from the task's gold.
Its rules, for each agent message, in order:

1. The agent says it transfers the customer to a human agent: ``###TRANSFER###``.
2. The agent says a change was made: the customer reads its account; the change it asked for is
   there: "Thank you!" and its next request; else "I don't see that change on my account."
3. Its request is a question and the message states figures: one figure is its answer; several
   get "Which is it?".
4. A statement (no question) saying something will not be done (a negation: "doesn't qualify",
   "I can't", "unfortunately", ...) is a refusal, whatever the words: it pushes back ``insist``
   times, then accepts it and moves on.
5. A question asking for a detail (which, what, how, ...) gets the detail from its wishes; an
   identity question (user id, reservation id, ...) its known info ("I don't remember" for its
   unknown info, which it never offers).
6. A message naming the details of a write is a proposal, however it is worded. It says yes when
   the proposal is what it wants (:func:`~airline_gym.users.intent_wishes.judge`: its
   reservation, any flight its rule allows now, its cabin, bags, payment methods), no with what
   it wants instead otherwise (after two such misses it leaves, unsatisfied), and declines what
   is over its budget. A question without the details gets "What exactly would you do?".
7. "Anything else?": the next request when its account shows this one done, else it restates it.
   A fallback request (``if_refused``) comes next only after a refusal or a decline: after a
   granted request it is skipped (:mod:`~airline_gym.users.intent_fallbacks`).
8. Anything else is a stall: it restates its request; after three stalls in a row (two if
   impatient), or ``max_turns`` turns, it leaves unsatisfied.

Its persona (:mod:`~airline_gym.users.intent_persona`) words these answers, never changes them;
a several-at-once customer states all its requests in its opening, then takes them in order.

It ends with ``###STOP###`` when every request is granted, refused or declined. How it leaves
unsatisfied is :data:`~airline_gym.domain.said.LEAVE_UNSATISFIED` (strict grading reads it).

Each reply costs the same at any turn: the customer keeps its state and reads only the messages
added since its last reply (a dialogue that is not a continuation is replayed from its start), and
of a message only its first :data:`~airline_gym.domain.said.READ_LIMIT` characters (what strict
grading counts as seen).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from airline_gym.data import data_files
from airline_gym.domain.database import AirlineDB, load_pristine
from airline_gym.domain.intents import Intent, Request
from airline_gym.domain.prompts import STOP, TRANSFER
from airline_gym.domain.said import LEAVE_UNSATISFIED, figures, readable
from airline_gym.users.base import Dialogue
from airline_gym.users.dialogue_cursor import DialogueCursor
from airline_gym.users.intent_claims import asserting, insisting
from airline_gym.users.intent_fallbacks import lead_in, next_index
from airline_gym.users.intent_persona import Voice
from airline_gym.users.intent_wishes import judge, shows_done
from airline_gym.users.intent_words import (
    DONE_RE,
    HELP_RE,
    MORE_RE,
    REFUSAL_RE,
    WH_RE,
    detail_answers,
    say_request,
)
from airline_gym.users.scripted_rules import (
    IDENTITY_RULES,
    TRANSFER_RE,
    asking_parts,
)

__all__ = ["IntentPlayer"]

_PUSH = (
    "I really need this. Could you make an exception just this once?",
    "Please check again; this matters a lot to me.",
)
_NUDGE = ("Could you help me with that?", "To be clear:", "Let me say it again:")
VAGUE = "What exactly would you do? Please tell me the details first."
NOT_SEEN = "I don't see that change on my account."
WHICH = "Which is it? Just the total, please."
_STALLED, _NOT_DONE, _MISSED, _TOO_LONG = LEAVE_UNSATISFIED
_DONE = "Thank you, that's everything I needed. " + STOP


@dataclass
class _Progress:
    """Where the customer is: its current request and how that request is going."""

    index: int = 0
    pushed: int = 0
    stalls: int = 0
    misses: int = 0
    yeses: int = 0  # in the whole call: its yeses take turns, never three alike in a row
    turns: int = 0
    #: What it said yes to for the current request (read back from its account).
    deal: dict[str, Any] = field(default_factory=dict)
    said: list[str] = field(default_factory=list)


class IntentPlayer:
    """One conversation's customer for ``intent``."""

    def __init__(
        self,
        intent: Intent,
        max_turns: int = 30,
        known_ids: frozenset[str] | None = None,
        describe: Callable[[str], str | None] | None = None,
        data_dir: Any = None,
    ) -> None:
        #: The reservation ids the customer can say (None: every id of its requests, unless
        #: ``reservation_ids`` is unknown); ``describe(id)`` words a trip whose id it cannot say.
        self.known_ids = known_ids
        self.describe = describe
        self.intent = intent
        self.voice = Voice(intent.persona)
        self.max_turns = max_turns
        self.data_dir = data_dir
        self.state = _Progress()
        self._db: AirlineDB | None = None
        self._cursor = DialogueCursor()
        self._answer = ""

    def attach_db(self, db: AirlineDB) -> None:
        """Read the customer's account from ``db`` (the episode's live DB)."""
        self._db = db

    @property
    def db(self) -> AirlineDB:
        """The DB the customer reads: the episode's, else a fresh copy of the pristine DB."""
        if self._db is None:
            path = None if self.data_dir is None else data_files(self.data_dir).db
            self._db = load_pristine(path).fork()
        return self._db

    def fresh(self) -> IntentPlayer:
        """A player of the same customer at the start of a conversation (what it knows is
        shared: none of it changes)."""
        player = copy.copy(self)
        player.state, player._db = _Progress(), None
        player._cursor, player._answer = DialogueCursor(), ""
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
        trip = (self.intent.known.get("trip") or trip) if rid else None  # generated: its words
        return f"my reservation {trip}" if trip else "my upcoming reservation"

    def _words(self, request: Request) -> str:
        """``request`` as the customer states it."""
        return say_request(request, self._which(request))

    def _asking(self, request: Request) -> str:
        """``request`` as the customer asks for it: its statement, then its claim (if any)."""
        return asserting(request, self._words(request))

    def _current(self) -> Request | None:
        requests = self.intent.requests
        return requests[self.state.index] if self.state.index < len(requests) else None

    # -- the conversation -------------------------------------------------------------------------

    def opening(self) -> str:
        """The first message: the first request (several-at-once: every request it will ask
        without waiting for a refusal), then the name and user id (when known)."""
        request = self._current()
        agenda = self.intent.requests if self.intent.persona.several_at_once else ()
        asks = [self._asking(r) for r in agenda if not r.if_refused]
        if not asks:
            asks = [self._asking(request) if request else "I have a question."]
        identity = []
        if self.known("name"):
            identity.append(f"My name is {self.intent.name}.")
        if self.known("user_id"):
            identity.append(f"My user id is {self.intent.user_id}.")
        return self._say(self.voice.opening(asks, identity, self._trip_date(request)))

    def _trip_date(self, request: Request | None) -> str | None:
        """The first date of the trip ``request`` is about (a confused customer says it first)."""
        if not self.intent.persona.confused or request is None:
            return None
        reservation = self.db.reservation(request.reservation_id or "")
        if reservation and reservation["flights"]:
            return str(reservation["flights"][0]["date"])
        return request.trip.outbound.date if request.trip else None

    def reply(self, dialogue: Dialogue) -> str:
        """The next customer message (see the module docstring).

        Reads only the messages added since the last call when ``dialogue`` continues the one it
        answered then (the env's case); any other dialogue is replayed from its start.
        """
        start = self._cursor.advance(dialogue)
        if start is None:  # the very dialogue answered last time
            return self._answer
        if start == 0:
            self.state = _Progress()
            self._answer = self.opening() if not dialogue else ""
        for i in range(start, len(dialogue)):
            message = dialogue[i]
            ends_turn = i + 1 == len(dialogue) or dialogue[i + 1].get("role") == "user"
            if message.get("role") == "assistant" and ends_turn:
                self._answer = self._reply_to(readable(str(message.get("content") or "")))
        return self._answer

    def _reply_to(self, last: str) -> str:
        state = self.state
        state.turns += 1
        if TRANSFER_RE.search(last):
            return TRANSFER
        if state.turns == 1:
            return self.opening()
        if state.turns > self.max_turns:
            return self._leave(_TOO_LONG)
        request = self._current()
        if request is None:
            return _DONE
        answer = self._react(last, request)
        return answer if answer is not None else self._stall(request)

    def _react(self, text: str, request: Request) -> str | None:
        """The answer to one agent message, or None when it gives the customer nothing to do."""
        asked = asking_parts(text)
        identity = self._identity(asked, text)
        if DONE_RE.search(text) and request.kind != "info":
            return self._check_account(request, identity)
        if request.kind == "info":
            found = figures(text)
            if len(found) == 1:
                return self._advance("Thanks, that's what I needed.")
            if found:
                return self._stall(request, WHICH)
        question = bool(asked) or "?" in text
        if not question and REFUSAL_RE.search(text):
            return self._refused(request)
        verdict = judge(request, text, self.db, self.intent.user_id)
        details = detail_answers(asked, request) if asked else []
        if details and (verdict.answer in ("none", "vague") or WH_RE.search(asked)):
            return self._answered([*identity, *details])
        if verdict.answer == "yes":
            self.state.deal = dict(verdict.deal)
            self.state.yeses += 1
            return self._answered([*identity, self.voice.yes(self.state.yeses - 1)])
        if verdict.answer == "decline":
            return self._advance(verdict.why, declined=True)
        if verdict.answer == "no":
            self.state.misses += 1
            if self.state.misses >= 2:
                return self._leave(_MISSED)
            return self._answered([verdict.why, self._words(request)])
        if identity:
            return self._answered(identity)
        if MORE_RE.search(text):
            if shows_done(request, self.db, self.intent.user_id, self.state.deal):
                return self._advance("Thanks.")
            return self._answered([f"Yes: {self._words(request)}"])
        if HELP_RE.search(text):
            return self._answered([self._words(request)])
        if (question and verdict.answer == "vague") or _bare_question(text, asked):
            return self._stall(request, VAGUE)
        return None

    def _answered(self, parts: list[str]) -> str:
        self.state.stalls = 0
        return self._say(" ".join(p for p in parts if p))

    def _check_account(self, request: Request, identity: list[str]) -> str:
        """The agent says it is done: the customer reads its account."""
        if shows_done(request, self.db, self.intent.user_id, self.state.deal):
            return self._advance(" ".join([*identity, "Thank you!"]))
        self.state.stalls += 1
        if self.state.stalls >= self._patience():
            return self._leave(_NOT_DONE)
        return self._say(f"{NOT_SEEN} {self._words(request)}")

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

    def _refused(self, request: Request) -> str:
        if self.state.pushed < request.insist:
            self.state.pushed += 1
            self.state.stalls = 0
            return self.voice.push(insisting(request, _PUSH[(self.state.pushed - 1) % len(_PUSH)]))
        return self._advance("I understand.", declined=True)

    def _advance(self, ack: str, declined: bool = False) -> str:
        """Close the current request and say the next one (or stop)."""
        old = self.state
        index = next_index(self.intent, old.index, refused=declined)  # skips unasked fallbacks
        self.state = _Progress(index=index, said=old.said, turns=old.turns, yeses=old.yeses)
        request = self._current()
        if request is None:
            end = "Never mind then, thank you." if declined else "That's everything, thank you."
            return f"{ack} {end} {STOP}"
        lead = lead_in(self.intent, index, self.voice.next_request())
        return f"{ack} {lead} {self._asking(request)}"

    def _patience(self) -> int:
        return 3 if self.intent.persona.patient else 2

    def _stall(self, request: Request, answer: str | None = None) -> str:
        self.state.stalls += 1
        if self.state.stalls >= self._patience():
            return self._leave(_STALLED)
        if answer is not None:
            return self._say(answer)
        nudge = _NUDGE[(self.state.stalls - 1) % len(_NUDGE)]
        return self._say(self.voice.nudge(f"{nudge} {self._words(request)}"))

    def _leave(self, why: str) -> str:
        """End the call unsatisfied (strict grading reads ``why``)."""
        return f"{why} Never mind, goodbye. {STOP}"

    def _say(self, text: str) -> str:
        """Remember what was said; never the same text as the two turns before."""
        said = self.state.said
        if len(said) >= 2 and said[-1] == said[-2] == text:
            text = f"As I said: {text}"
        said.append(text)
        del said[:-2]  # only the last two are ever compared
        return text


def _bare_question(text: str, asked: str) -> bool:
    """A yes-or-no question asking nothing the customer can answer (``Shall I proceed?``)."""
    return ("?" in text or bool(asked)) and not WH_RE.search(asked)
