"""A deterministic, offline customer: a few regex rules over the agent's latest message."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from airline_gym.domain.prompts import GREETING, STOP, TRANSFER
from airline_gym.domain.tasks import Task
from airline_gym.errors import ConfigError
from airline_gym.users.base import Dialogue, UserSimulator

__all__ = ["Profile", "ScriptedUser", "first_person"]

_I = re.IGNORECASE

# -- what the customer knows, read from the scenario ---------------------------------------

USER_ID_RE = re.compile(r"\b[a-z]+(?:_[a-z]+)+_\d{3,}\b")
#: Six upper-case letters/digits, at least one letter, not a flight number such as HAT045.
RESERVATION_ID_RE = re.compile(r"\b(?![A-Z]{3}\d{3}\b)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b")
NAME_RE = re.compile(r"\b(?:[Yy]ou are|[Yy]our name is)\s+([A-Z][a-z]+(?: [A-Z][a-z]+)+)")
#: Matches start only where a run of address characters starts: without the look-behind the
#: engine rescans the run from every position (quadratic in a long run without an "@").
EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
DOB_RE = re.compile(
    r"(?:date of birth|\bdob\b|birthday|born)\D{0,20}?"
    r"(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{4}|[A-Z][a-z]+ \d{1,2},? \d{4})",
    _I,
)
PAYMENT_RE = re.compile(
    r"\b(?:credit_card|gift_card|certificate)_\d+\b"
    r"|\b(?:gift card|credit card|master ?card|travel certificate|certificate)s?\b",
    _I,
)
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


# -- the rules --------------------------------------------------------------------------------

#: (item, how the agent asks for it, answer when known, answer when not known)
IDENTITY_RULES: tuple[tuple[str, re.Pattern[str], str, str], ...] = tuple(
    (item, re.compile(pattern, _I), known, unknown)
    for item, pattern, known, unknown in (
        (
            "user_id",
            r"user[\s_-]*id|user ?name|account (?:id|number)",
            "My user id is {}.",
            "I don't know my user id.",
        ),
        (
            "reservation_ids",
            r"reservation (?:id|number|code|#)|confirmation (?:number|code)"
            r"|booking (?:id|reference|number|code)",
            "My reservation id is {}.",
            "I don't have my reservation id. Could you look it up?",
        ),
        ("name", r"\b(?:full|first|last|your) name\b", "My name is {}.", "I'd rather not say."),
        (
            "dob",
            r"date of birth|\bdob\b|birth ?day|birth date",
            "My date of birth is {}.",
            "I don't have my date of birth at hand; it is in my profile.",
        ),
        ("email", r"\be-?mail\b", "My email is {}.", "I don't have my email address at hand."),
        (
            "payment",
            r"(?:which|what) (?:payment|form of payment|card)|payment method (?:would|do|will) you"
            r"|how (?:would|do|will) you (?:like to |want to )?pay",
            "I'd like to pay with my {}.",
            "Which payment methods do I have on file?",
        ),
    )
)

#: (name, pattern on the agent's latest message, reply); the first match wins. "{request}" is
#: replaced by the customer's request.
RULES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (name, re.compile(pattern, _I), reply)
    for name, pattern, reply in (
        ("help", r"how (?:can|may) i (?:help|assist)|what can i do for you", "{request}"),
        (
            "done",
            r"anything else|have a (?:great|good|nice|wonderful|safe|pleasant|lovely) "
            r"(?:day|trip|flight|one|evening|weekend)"
            r"|\byou(?:['\u2019]re| are) all set\b|\ball done\b"
            r"|^\W*done\W*$",
            STOP,
        ),
        (
            "confirm",
            r"\b(?:proceed|confirm|go ahead|would you like|shall i|should i|do you want|"
            r"is (?:that|this) (?:correct|right|ok|okay)|yes\s*/\s*no|are you sure|sound good|"
            r"(?:ok|okay) with|agree)\b",
            "Yes, please go ahead.",
        ),
    )
)

TRANSFER_RE = re.compile(
    r"\b(?:(?:you are|you['\u2019]re|you will be|you['\u2019]ll be) (?:now )?(?:being )?transferred"
    r"|(?:i am|i['\u2019]m|i will be|i['\u2019]ll be) (?:now )?transferring you) to a human agent",
    _I,
)
_ASKING_RE = re.compile(
    r"\?|\b(?:provide|share|tell me|give me|let me know|confirm|verify|need|what is|what's|"
    r"may i|could you|can you)\b",
    _I,
)
_LIST_ITEM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s")
#: What the agent already quotes when it is telling, not asking: (item, pattern).
_QUOTED: dict[str, re.Pattern[str]] = {
    "user_id": USER_ID_RE,
    "reservation_ids": RESERVATION_ID_RE,
    "dob": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "email": EMAIL_RE,
    "payment": re.compile(r"\b(?:credit_card|gift_card|certificate)_\d+\b"),
}


def asking_parts(text: str) -> str:
    """The sentences of ``text`` that ask or request something, with the list items that
    follow such a sentence ("Could you provide: 1. your user id 2. ...")."""
    parts: list[str] = []
    in_request = False
    for line in re.split(r"\r?\n|\\n", text):  # also literal "\n" (JSON-quoted replies)
        if _LIST_ITEM_RE.match(line):
            if in_request or "?" in line:
                parts.append(line)
            continue
        in_request = False
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            in_request = bool(_ASKING_RE.search(sentence))
            if in_request:
                parts.append(sentence)
    return "\n".join(parts)


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

    Limits: it matches keywords, it does not understand text. It cannot negotiate, choose
    between options, give a cancellation reason, or follow the scenario's conditional
    instructions; it says yes to every proposal and ends when the agent offers more help,
    whether or not the goal was met. Use it for offline, reproducible plumbing tests and
    smoke runs, not to measure agent quality.
    """

    offline = True
    blocking = False

    def __init__(self, max_turns: int = 30) -> None:
        if max_turns < 1:
            raise ConfigError("max_turns must be at least 1")
        self.max_turns = max_turns
        self.task: Task | None = None
        self.profile: Profile | None = None

    def reset(self, task: Task, seed: int | None = None) -> None:
        """Read the customer's profile from ``task`` (``seed`` is unused: no randomness)."""
        self.task = task
        self.profile = Profile.from_task(task)

    def opening(self) -> str:
        """The first message: the request, then who the customer is."""
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

    def reply(self, dialogue: Dialogue) -> str:
        """The next customer message (see the class docstring for the rules)."""
        profile = self._profile()
        agent = [str(m.get("content") or "") for m in dialogue if m.get("role") == "assistant"]
        user_turns = sum(1 for m in dialogue if m.get("role") == "user")
        last = agent[-1] if agent else ""
        if TRANSFER_RE.search(last):
            return TRANSFER
        if user_turns == 0:
            return self.opening()
        # the env's fixed greeting is not the agent's: saying it again is not a repetition
        own = agent[1:] if agent and agent[0] == GREETING else agent
        repeated = len(own) > 1 and _norm(own[-1]) == _norm(own[-2])
        if repeated or user_turns >= self.max_turns:
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
                quoted = _QUOTED.get(item)
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
