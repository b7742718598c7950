"""What a message says, read for its content: reservation ids, flights, cabins, payment methods, bag
counts and figures; whether a customer's turn says yes; how a customer leaves unsatisfied.

One pure reading shared by the offline customer (``airline_gym.users``) and strict grading
(:mod:`~airline_gym.domain.strict_grading`), so that what the customer took from a message is
what grading credits. Every function is linear in the text's length.

>>> figures("The total is $1,234.50 for 2 passengers on HAT001 (2024-05-20, 10:00 AM).")
(1234.5, 2.0)
>>> bag_counts("I'll add two more bags: 3 checked bags in total.")
frozenset({2, 3})
>>> is_yes("My user id is mia_li_3668. Yes, please go ahead.")
True
"""

from __future__ import annotations

import re

__all__ = [
    "CABIN_RE",
    "DIGITS_ID_RE",
    "FLIGHT_RE",
    "LEAVE_UNSATISFIED",
    "PAYMENT_ID_RE",
    "READ_LIMIT",
    "RESERVATION_ID_RE",
    "bag_counts",
    "cabins",
    "figure_equals",
    "figures",
    "is_yes",
    "left_unsatisfied",
    "mentions_certificate",
    "readable",
]

_I = re.IGNORECASE

#: How much of one agent message the offline customer reads, and so all strict grading counts
#: as seen: 20,000 characters, beyond any real agent's message (the longest in 344 recorded
#: leaderboard simulations is 11.5 kB) and a bound on a hostile one's cost.
READ_LIMIT = 20_000

FLIGHT_RE = re.compile(r"\bHAT\d{3}\b")
#: Six upper-case letters/digits, at least one letter, not a flight number such as HAT045
#: (a reservation id may look like one of another airline: MIR482).
RESERVATION_ID_RE = re.compile(r"\b(?!HAT\d{3}\b)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b")
#: Six digits, not part of a figure: a reservation id only where the DB has one so named (one
#: does, 429815), which RESERVATION_ID_RE (a letter, lest a figure pass for an id) does not read.
DIGITS_ID_RE = re.compile(r"(?<![\d,.$])\b\d{6}\b(?![,.]\d)")
#: A payment method id (``credit_card_123``, ``gift_card_4``, ``certificate_56``).
PAYMENT_ID_RE = re.compile(r"\b(?:credit_card|gift_card|certificate)_\d+\b")
#: Longest first: "basic economy" is not "economy".
CABIN_RE = re.compile(r"\bbasic[ _-]economy\b|\beconomy\b|\bbusiness\b", _I)

_COUNT_WORDS = {
    "no": 0,
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_BAGS_RE = re.compile(
    r"\b(\d{1,3}|" + "|".join(_COUNT_WORDS) + r")\s+(?:(?:more|extra|additional|new|checked|"
    r"paid|free|non-?free|total)\s+){0,3}(?:checked\s+)?(?:bags?|baggages?|luggage)\b",
    _I,
)
_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
#: What looks like a number but is not a figure: ids, flight numbers, dates and clock times.
_NOT_FIGURES = re.compile(
    r"\b(?:credit_card|gift_card|certificate)_\d+\b"
    r"|\b[a-z]+(?:_[a-z]+)+_\d+\b"
    r"|\b[A-Z0-9]*\d[A-Z0-9]*[A-Z][A-Z0-9]*\b|\b[A-Z]+\d[A-Z0-9]*\b"
    r"|\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    rf"|\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b(?:,?\s+\d{{4}})?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?(?:\+1)?"
    r"|\b\d{1,2}\s*[ap]\.?m\.?\b",
    _I,
)
_NUMBER_RE = re.compile(r"(?<![\w.])-?\$?\s?\d[\d,]*(?:\.\d+)?(?![\w-])")

#: How the offline customer ends a call it is unhappy with (grading reads these too).
LEAVE_UNSATISFIED: tuple[str, ...] = (
    "I don't think we're getting anywhere.",
    "I still don't see the change on my account.",
    "That's not what I wanted.",
    "This is taking too long.",
)
_LEFT_RE = re.compile(
    "|".join(re.escape(s[:-1]) for s in LEAVE_UNSATISFIED)
    + r"|\bnot getting anywhere\b|\bwaste of (?:my )?time\b|\bunsatisfied\b|\bdissatisfied\b"
    r"|\bgive up\b|\bforget it\b",
    _I,
)
_YES_RE = re.compile(
    r"^\W*(?:as i said:?\s*)?(?:yes|yeah|yep|sure|ok(?:ay)?|alright|all right|correct"
    r"|confirmed|absolutely|definitely|of course|please (?:do|go ahead|proceed)|go ahead"
    r"|that(?:'s| is) (?:right|correct|fine|good|perfect)"
    r"|(?:that|this) (?:sounds|looks) (?:good|right|fine|great)"
    r"|i confirm|i agree|please proceed|proceed)\b",
    _I,
)
_NO_RE = re.compile(r"^\W*(?:no|nope|not|don't|do not|never|wait|hold on)\b", _I)
_CERTIFICATE_RE = re.compile(r"\bcertificate\b|\bvoucher\b|\bcompensat", _I)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")


def readable(text: str) -> str:
    """The part of an agent message the customer reads (:data:`READ_LIMIT`)."""
    return text[:READ_LIMIT]


def cabins(text: str) -> frozenset[str]:
    """The cabins ``text`` names (``basic_economy``, ``economy``, ``business``)."""
    return frozenset(
        m.group(0).lower().replace(" ", "_").replace("-", "_") for m in CABIN_RE.finditer(text)
    )


def bag_counts(text: str) -> frozenset[int]:
    """Every number of bags ``text`` names ("2 checked bags", "three more bags")."""
    out = set()
    for match in _BAGS_RE.finditer(text):
        word = match.group(1).lower()
        out.add(_COUNT_WORDS[word] if word in _COUNT_WORDS else int(word))
    return frozenset(out)


def figures(text: str) -> tuple[float, ...]:
    """The distinct numbers ``text`` states, in order: amounts, counts, totals; never part of an
    id, a flight number, a date or a clock time. ``$1,234.50`` is 1234.5."""
    plain = _NOT_FIGURES.sub(" ", text)
    out: list[float] = []
    for match in _NUMBER_RE.finditer(plain):
        raw = match.group(0).replace("$", "").replace(",", "").replace(" ", "")
        try:
            value = float(raw)
        except ValueError:
            continue
        value = abs(value)  # "-$50" is a refund of 50, said as a positive figure
        if value not in out:
            out.append(value)
    return tuple(out)


def figure_equals(value: float, said: str) -> bool:
    """Whether ``value`` is the figure ``said`` (a communicate string such as ``"1234.5"``)."""
    try:
        return abs(value - float(said.replace(",", ""))) < 0.005
    except ValueError:
        return False


def mentions_certificate(text: str) -> bool:
    """Whether ``text`` speaks of a certificate, voucher or compensation."""
    return _CERTIFICATE_RE.search(text) is not None


def is_yes(text: str) -> bool:
    """Whether a customer's turn says yes: some sentence begins with an assent, and the turn
    does not begin with a no."""
    if _NO_RE.match(text):
        return False
    return any(_YES_RE.match(s) for s in _SENTENCE_RE.split(text) if s.strip())


def left_unsatisfied(text: str) -> bool:
    """Whether a customer's last turn leaves the call unhappy (the offline customer's
    :data:`LEAVE_UNSATISFIED`, or the common ways an LLM customer says so)."""
    return _LEFT_RE.search(text) is not None
