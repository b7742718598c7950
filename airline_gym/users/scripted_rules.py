"""The scripted customers' shared patterns: ids and contact data in a scenario, how an agent asks
for identity items, the transfer hand-off, and which sentences of a message ask something."""

from __future__ import annotations

import re

from airline_gym.domain.prompts import STOP
from airline_gym.domain.said import PAYMENT_ID_RE, RESERVATION_ID_RE

__all__ = [
    "DOB_RE",
    "EMAIL_RE",
    "IDENTITY_RULES",
    "NAME_RE",
    "PAYMENT_ID_RE",
    "PAYMENT_RE",
    "QUOTED",
    "RESERVATION_ID_RE",
    "RULES",
    "TRANSFER_RE",
    "USER_ID_RE",
    "asking_parts",
]

_I = re.IGNORECASE

# -- what the customer knows, read from the scenario ---------------------------------------

USER_ID_RE = re.compile(r"\b[a-z]+(?:_[a-z]+)+_\d{3,}\b")
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
QUOTED: dict[str, re.Pattern[str]] = {
    "user_id": USER_ID_RE,
    "reservation_ids": RESERVATION_ID_RE,
    "dob": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "email": EMAIL_RE,
    "payment": PAYMENT_ID_RE,
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
