"""A deterministic, offline customer: a few regex rules over the agent's latest message."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from airline_gym.domain.prompts import GREETING, STOP, TRANSFER
from airline_gym.domain.said import readable
from airline_gym.domain.tasks import Task
from airline_gym.errors import ConfigError
from airline_gym.users.base import Dialogue, UserSimulator
from airline_gym.users.dialogue_cursor import DialogueCursor
from airline_gym.users.intent_customers import customer_for
from airline_gym.users.intent_user import IntentPlayer
from airline_gym.users.scripted_rules import (
    DOB_RE,
    EMAIL_RE,
    IDENTITY_RULES,
    NAME_RE,
    PAYMENT_RE,
    QUOTED,
    RESERVATION_ID_RE,
    RULES,
    TRANSFER_RE,
    USER_ID_RE,
    asking_parts,
)

__all__ = ["EMAIL_RE", "Profile", "ScriptedUser", "asking_parts", "first_person"]

_I = re.IGNORECASE
_PAYING_RE = re.compile(r"\bpay(?:ing|ment)?\b|\buse (?:your|my)\b", _I)

_VERBS = (
    "want|need|have|had|will|would|can|cannot|can't|could|should|must|may|might|do|don't|did|"
    "didn't|think|thought|believe|booked|purchased|paid|made|spoke|recently|just|also|only|"
    "currently|still|really|decided|remember|prefer|contact|know|feel|plan|wish|hope|live|faced|"
    "received|got|found|tried|make|already|never|always|then|now"
)
#: Second-person -> first-person rewrites, applied in order (case of the first letter is kept).
_PRONOUNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, _I), repl)
    for pattern, repl in (
        (r"\byou are\b", "I am"),
        (r"\byou were\b", "I was"),
        (r"\byou['\u2019]re\b", "I'm"),
        (r"\byou['\u2019]ve\b", "I've"),
        (r"\byou['\u2019]d\b", "I'd"),
        (r"\byou['\u2019]ll\b", "I'll"),
        (r"\byourself\b", "myself"),
        (r"\byours\b", "mine"),
        (r"\byour\b", "my"),
        (rf"\byou(?=\s+(?:{_VERBS})\b)", "I"),
        (r"\byou\b", "me"),
    )
)
#: Scenario sentences that are stage directions for the simulator, not things to say.
_META_RE = re.compile(r"\b(?:the agent|mention|abruptly|halfway)\b", _I)


def first_person(text: str) -> str:
    """Rewrite a scenario sentence from "you" to "I" (a heuristic that handles the common cases)."""
    for pattern, repl in _PRONOUNS:

        def keep_case(match: re.Match[str], repl: str = repl) -> str:
            if repl.startswith("I") or not match.group(0)[0].isupper():
                return repl
            return repl[0].upper() + repl[1:]

        text = pattern.sub(keep_case, text)
    return text


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n\s*\n", text.strip()) if s.strip()]


def _request(reason: str, max_sentences: int = 3) -> str:
    """The first few sentences of ``reason_for_call``, in the first person, without directions."""
    text = re.sub(r":\s*\n\s*-\s*", ": ", reason)  # "you want to:\n- a\n- b" -> "to: a, b"
    text = re.sub(r"\s*\n\s*-\s*", ", ", text)
    text = " ".join(text.split())
    text = re.sub(r"^(?:first, )?try to\b", "I want to", text, flags=_I)
    sentences = [s for s in _sentences(text) if not _META_RE.search(s)]
    said = " ".join(first_person(s) for s in sentences[:max_sentences]).strip()
    if not said:
        return "I need some help with my reservation."
    return said if said[-1] in ".!?" else said + "."


@dataclass(frozen=True)
class Profile:
    """What the scripted customer knows about themself, extracted from the task scenario."""

    request: str
    user_id: str | None = None
    name: str | None = None
    reservation_ids: tuple[str, ...] = ()
    dob: str | None = None
    email: str | None = None
    payment: str | None = None

    @classmethod
    def from_task(cls, task: Task) -> Profile:
        """Read ids, name and contact data from ``known_info``; reservation ids also from the
        reason for call, and the payment method from sentences about paying."""
        info = task.instructions
        known = info.get("known_info") or ""
        reason = info.get("reason_for_call") or ""
        extra = info.get("task_instructions") or ""
        return _profile(str(known), str(reason), str(extra))

    def values(self, item: str) -> tuple[str, ...]:
        """The known values of an identity item (empty when unknown)."""
        value = getattr(self, item)
        if isinstance(value, tuple):
            return value
        return (value,) if value else ()


@lru_cache(maxsize=1024)
def _profile(known: str, reason: str, extra: str) -> Profile:
    """:meth:`Profile.from_task`'s work, once per scenario text (a reset repeats it otherwise)."""
    user_id = USER_ID_RE.search(known)
    name = NAME_RE.search(known)
    email = EMAIL_RE.search(known)
    dob = DOB_RE.search(known)
    paying = " ".join(s for s in _sentences(f"{known}\n{extra}") if _PAYING_RE.search(s))
    payment = PAYMENT_RE.search(paying)
    ids = RESERVATION_ID_RE.findall(f"{known}\n{reason}")
    return Profile(
        request=_request(reason),
        user_id=user_id.group(0) if user_id else None,
        name=name.group(1) if name else None,
        reservation_ids=tuple(dict.fromkeys(ids)),
        dob=dob.group(1) if dob else None,
        email=email.group(0) if email else None,
        payment=payment.group(0).lower() if payment else None,
    )


class _Seen:
    """What the keyword customer keeps of the dialogue: its turns and the agent's last two
    texts (not the whole history)."""

    def __init__(self) -> None:
        self.user_turns = 0
        self.agent_count = 0
        self.greeted = 0  # 1 when the agent's first message is the env's fixed greeting
        self.agent: list[str] = []

    def read(self, messages: Dialogue) -> None:
        for message in messages:
            role = message.get("role")
            if role == "user":
                self.user_turns += 1
            elif role == "assistant":
                text = readable(str(message.get("content") or ""))  # as much as it reads
                if self.agent_count == 0 and text == GREETING:
                    self.greeted = 1
                self.agent_count += 1
                self.agent = [*self.agent[-1:], text]


QUESTION_FALLBACK = "I'm not sure about that."
STATEMENT_FALLBACK = "Okay, thank you."


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


class ScriptedUser(UserSimulator):
    """A deterministic customer built from the task scenario: no LLM, no randomness.

    The reply depends only on the task and the dialogue (``seed`` is ignored). Rules, in order:

    1. the agent says the customer is transferred to a human agent -> ``###TRANSFER###``;
    2. first turn -> an opening: the reason for the call (its first sentences, rewritten in the
       first person), then the name, user id and reservation ids from the scenario;
    3. the agent repeats its previous message (up to case and spacing), or the customer spoke
       ``max_turns`` times already -> ``###STOP###``;
    4. the agent asks for identity items (:data:`IDENTITY_RULES`: user id, reservation id,
       name, date of birth, email, payment method) -> the known ones, or "I don't know";
    5. :data:`RULES` in order: "how can I help" -> the request; "anything else" / "have a
       great day" -> ``###STOP###``; a request to confirm / proceed -> "Yes, please go ahead.";
    6. otherwise "I'm not sure about that." (a question) or "Okay, thank you.".

    A task that carries a structured intent (a generated task's ``airline_gym.intent``, or a
    benchmark task whose request has been written as one) is played by
    :class:`~airline_gym.users.intent_user.IntentPlayer` instead: it refuses what it did not
    ask for, pushes back, accepts refusals and stops when its requests are settled. The rules
    below are the fallback for tasks with no intent (and for every task with
    ``intents=False``).

    Of each agent message it reads the first :data:`~airline_gym.domain.said.READ_LIMIT`
    characters, and each reply reads only the messages added since the last one.

    Limits: it matches keywords, it does not understand text. It cannot negotiate, choose
    between options, give a cancellation reason, or follow the scenario's conditional
    instructions; it says yes to every proposal and ends when the agent offers more help,
    whether or not the goal was met. Use it for offline, reproducible plumbing tests and
    smoke runs, not to measure agent quality.
    """

    offline = True
    blocking = False

    def __init__(
        self,
        max_turns: int = 30,
        benchmark: str | None = None,
        data_dir: Any = None,
        intents: bool = True,
    ) -> None:
        if max_turns < 1:
            raise ConfigError("max_turns must be at least 1")
        self.max_turns = max_turns
        #: Whose benchmark intents apply to task ids (None: the default benchmark's).
        self.intents_of = benchmark
        self.data_dir = data_dir
        #: Whether a task's intent is played (False: the keyword rules on every task).
        self.intents = intents
        self.task: Task | None = None
        self.profile: Profile | None = None
        self.player: IntentPlayer | None = None
        self.db: Any = None
        self._cursor = DialogueCursor()
        self._seen = _Seen()
        self._answer = ""

    def reset(self, task: Task, seed: int | None = None) -> None:
        """Read the customer's profile and intent from ``task`` (``seed`` is unused)."""
        self.task = task
        self.profile = Profile.from_task(task)
        self.player = (
            customer_for(task, self.intents_of, self.max_turns, self.data_dir)
            if self.intents
            else None
        )
        self.db = None
        self._cursor = DialogueCursor()
        self._seen = _Seen()

    def opening(self) -> str:
        """The first message: the request, then who the customer is."""
        if self.player is not None:
            return self.player.opening()
        p = self._profile()
        parts = ["Hi!", p.request]
        if p.name:
            parts.append(f"My name is {p.name}.")
        if p.user_id:
            parts.append(f"My user id is {p.user_id}.")
        new_ids = [r for r in p.reservation_ids if r not in p.request]
        if new_ids:
            noun = "reservation id is" if len(new_ids) == 1 else "reservation ids are"
            parts.append(f"My {noun} {' and '.join(new_ids)}.")
        return " ".join(parts)

    def attach_db(self, db: Any) -> None:
        """The episode's live DB, for the intent customer (the keyword rules read none)."""
        self.db = db
        if self.player is not None:
            self.player.attach_db(db)

    def reply(self, dialogue: Dialogue) -> str:
        """The next customer message (see the class docstring for the rules).

        Reads only the messages added since the last reply when ``dialogue`` continues the
        last one (see :class:`~airline_gym.users.dialogue_cursor.DialogueCursor`), so a reply
        costs the same at any turn.
        """
        if self.player is not None:
            return self.player.reply(dialogue)
        profile = self._profile()
        start = self._cursor.advance(dialogue)
        if start is None:
            return self._answer
        if start == 0:
            self._seen = _Seen()
        self._seen.read(dialogue[start:])
        self._answer = self._keyword_reply(profile)
        return self._answer

    def _keyword_reply(self, profile: Profile) -> str:
        seen = self._seen
        last = seen.agent[-1] if seen.agent else ""
        if TRANSFER_RE.search(last):
            return TRANSFER
        if seen.user_turns == 0:
            return self.opening()
        # the env's fixed greeting is not the agent's: saying it again is not a repetition
        own = seen.agent_count - seen.greeted
        repeated = own > 1 and _norm(seen.agent[-1]) == _norm(seen.agent[-2])
        if repeated or seen.user_turns >= self.max_turns:
            return STOP
        answer = self._identity(last, profile)
        if answer:
            return answer
        for _name, pattern, response in RULES:
            if pattern.search(last):
                return response.replace("{request}", profile.request)
        return QUESTION_FALLBACK if "?" in last else STATEMENT_FALLBACK

    def _identity(self, text: str, profile: Profile) -> str | None:
        """Answers to the identity items the agent asks for; an item whose value the agent
        already quotes is not being asked for."""
        asked = asking_parts(text)
        answers = []
        for item, pattern, known, unknown in IDENTITY_RULES:
            if not pattern.search(asked):
                continue
            values = profile.values(item)
            if not values:
                quoted = QUOTED.get(item)
                if quoted is None or not quoted.search(text):
                    answers.append(unknown)
            elif any(v not in text for v in values):
                template = "My reservation ids are {}." if len(values) > 1 else known
                answers.append(template.format(" and ".join(values)))
        return " ".join(answers) or None

    def _profile(self) -> Profile:
        if self.profile is None:
            raise RuntimeError("ScriptedUser.reset(task) must be called before reply()")
        return self.profile
