"""What the intent-playing customer says, and what it reads in the agent's messages.

Pure wording and regular expressions for :mod:`airline_gym.users.intent_user`: a request said in
the first person, the whole payment plan, answers to the agent's questions about a request's
details, and the patterns that spot a refusal, a change said to be done, a question asking for a
detail, or an offer of more help. What a proposal names is read by :mod:`airline_gym.domain.said`
(shared with grading), not here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from airline_gym.domain.intents import CABIN_WORDS, FlightRule, Passenger, PaymentPart, Request

__all__ = [
    "DONE_RE",
    "HELP_RE",
    "KIND_RE",
    "MORE_RE",
    "REFUSAL_RE",
    "WH_RE",
    "detail_answers",
    "say_payment",
    "say_request",
]

_I = re.IGNORECASE

#: A statement that something will not be done: a negation or an apology that turns it down.
#: Any answer that leaves the request unmet, is not a question and says this is a refusal,
#: whatever its other words; a statement without it (a stall) is not.
REFUSAL_RE = re.compile(
    r"\b(?:not|no longer|cannot|unable|ineligible|unfortunately|afraid|regret\w*|prohibit\w*"
    r"|forbid\w*|impossible|denied|deny|decline[sd]?|refuse[sd]?|outside|beyond"
    r"|against (?:our |the )?polic(?:y|ies)|rules? (?:it|this|that) out|no way)\b"
    r"|\b\w+n['\u2019]t\b|\bsorry,? but\b",
    _I,
)
#: A statement that a change was made (the customer then reads its account).
DONE_RE = re.compile(
    r"\b(?:has been|have been|was|were|is now|are now|successfully|i've|i have|we've|we have"
    r"|i just)\s+(?:\w+\s+)?(?:cancell?ed|changed|updated|modified|booked|added|issued"
    r"|upgraded|downgraded|sent|processed|corrected|made|completed|created|refunded|moved"
    r"|rebooked|applied|done)\b|\ball set\b|\bis confirmed\b|\bis complete\b|\bis done\b",
    _I,
)
MORE_RE = re.compile(
    r"anything else|something else|other (?:questions|requests)|what else"
    r"|how (?:can|may) i (?:help|assist)|what can i do for you",
    _I,
)
HELP_RE = re.compile(r"how (?:can|may) i (?:help|assist)|what can i do for you", _I)
#: A question asking for a detail (not a yes or no).
WH_RE = re.compile(
    r"\b(?:which|what|why|when|where|who|how|provide|tell me|let me know|share)\b", _I
)

#: The words that name each kind of change (for spotting a proposal of another kind).
KIND_RE: dict[str, re.Pattern[str]] = {
    "cancel": re.compile(r"\bcancel", _I),
    "book": re.compile(r"\bbook(?:ing)? (?:a |the )?(?:new|flight|reservation|trip)", _I),
    "change_cabin": re.compile(r"\bupgrad|\bdowngrad|\bcabin\b", _I),
    "add_bags": re.compile(r"\bbag", _I),
    "add_insurance": re.compile(r"\binsurance\b", _I),
    "compensation": re.compile(r"\bcertificate\b|\bcompensat|\bvoucher", _I),
    "edit_passenger": re.compile(r"\bpassenger (?:name|details)|\bdate of birth", _I),
}

_REASONS = {
    "change_of_plan": "My plans have changed.",
    "airline_cancelled": "The airline cancelled one of my flights.",
    "health": "I'm unwell and my doctor told me not to travel.",
    "weather": "There's a storm forecast where I'm going.",
    "other": "Something came up at work.",
}
_ASK = {
    "total_upcoming_cost": "how much I paid in all for my upcoming reservations (each one not"
    " cancelled that still has a flight to take, a trip I am in the middle of included)",
    "reservation_cost": "how much I paid in all for {which}",
    "gift_card_balance": "how much is left on my gift cards, added together",
    "certificate_balance": "how much my travel certificates are worth, added together",
    "bag_allowance": "how many checked bags {which} includes for free, all passengers together",
    "change_total": "how much the changes I asked for come to in all",
}
_ORDINAL = ("first", "second", "third", "fourth", "fifth")


def _rule(rule: FlightRule) -> str:
    if rule.pick == "exact":
        return f"flight {' then '.join(rule.flight_numbers)} on {rule.date}"
    stops = "direct flight" if rule.direct_only else "flight (direct or one stop is fine)"
    nth = ("", "second ", "third ", "fourth ", "fifth ")
    rank = nth[rule.rank] if 0 <= rule.rank < len(nth) else f"number {rule.rank + 1} "
    bounds = [
        f"leaving after {rule.depart_after[:5]}" if rule.depart_after else "",
        f"leaving before {rule.depart_before[:5]}" if rule.depart_before else "",
        f"arriving before {rule.arrive_before[:5]}" if rule.arrive_before else "",
    ]
    among = ", ".join(b for b in bounds if b)
    text = f"the {rank}{rule.pick} {stops} on {rule.date}"
    return f"{text}, {among}" if among else text


def _people(passengers: Sequence[Passenger]) -> str:
    return ", ".join(f"{p.first_name} {p.last_name} (born {p.dob})" for p in passengers)


def say_payment(parts: Sequence[PaymentPart]) -> str:
    """The whole payment plan in the customer's words: every method, in order, and every fixed
    amount (parts without an amount each cover as much as they can, a credit card the rest)."""
    if not parts:
        return "I'll pay with what I have on file."
    if len(parts) == 1:
        return f"I'd like to use {parts[0].payment_id}."
    fixed = [f"${p.amount} on {p.payment_id}" for p in parts if p.amount is not None]
    rest = [p.payment_id for p in parts if p.amount is None]
    pieces = [f"put {', '.join(fixed)}"] if fixed else []
    if len(rest) == 1:
        pieces.append(f"put the rest on {rest[0]}" if fixed else f"use {rest[0]}")
    elif rest:
        pieces.append(
            ("then use " if fixed else "use ")
            + ", then ".join(rest)
            + ", in that order, each for as much as it covers (a credit card takes whatever is"
            " left)"
        )
    return "I'd like to " + "; ".join(pieces) + "."


def say_request(request: Request, which: str = "my upcoming reservation") -> str:
    """The request in the customer's words; ``which`` names its reservation as the customer
    can (``my reservation ABC123``, or a description when the id is not known)."""
    kind = request.kind
    if kind == "book" and request.trip is not None:
        trip = request.trip
        way = "one-way" if trip.return_rule is None else "round"
        text = (
            f"I'd like to book a {way} trip from {trip.origin} to {trip.destination} in "
            f"{CABIN_WORDS.get(request.cabin or 'economy', 'economy')}: "
            f"{_rule(trip.outbound)} going out"
        )
        if trip.return_rule is not None:
            text += f", and {_rule(trip.return_rule)} coming back"
        return text + "."
    if kind == "change_flights":
        legs = " and ".join(f"the {g.direction} flight to {_rule(g.rule)}" for g in request.legs)
        ends = "".join(
            f" The {g.direction} flight should end in {g.destination} instead."
            for g in request.legs
            if g.destination
        )
        return f"I'd like to change {legs} on {which}.{ends}"
    if kind == "edit_passenger" and request.new_passenger is not None:
        index = request.passenger_index or 0
        nth = _ORDINAL[index] if index < len(_ORDINAL) else f"number {index + 1}"
        new = request.new_passenger
        return (
            f"I need to correct the {nth} passenger on {which}: it should be "
            f"{new.first_name} {new.last_name}, born {new.dob}."
        )
    if kind == "info":
        what = _ASK.get(request.question or "", "a figure about my bookings")
        on = f", on {request.payment[0].payment_id}" if request.payment else ""
        return f"Could you tell me {what.replace('{which}', which)}{on}? Just the total, please."
    cabin = CABIN_WORDS.get(request.cabin or "", "another cabin")
    return {
        "book": "I'd like to book a flight.",
        "cancel": f"I'd like to cancel {which}.",
        "change_cabin": f"I'd like to change the cabin on {which} to {cabin}.",
        "add_bags": f"I'd like to add checked bags to {which}, {request.total_bags or 0} in total.",
        "edit_passenger": f"I need to correct a passenger on {which}.",
        "change_count": f"I'd like to change the travellers on {which} to "
        f"{_people(request.passengers)}.",
        "add_insurance": f"I'd like to add travel insurance to {which}.",
        "compensation": f"My flight {request.flight_number or ''} on {request.flight_date or ''} "
        f"was {request.complaint or 'disrupted'}. What can you do for me?",
    }.get(kind, "I need help with a reservation.")


#: (pattern on what the agent asks, the request fields it asks about)
_DETAILS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, _I), name)
    for pattern, name in (
        (r"\breason\b|\bwhy\b", "reason"),
        (r"\bcabin\b|\bclass\b", "cabin"),
        (r"\bbag", "bags"),
        (r"\binsurance\b", "insurance"),
        (r"\bpassenger|\btravell?er|\bwho (?:is|will be) (?:flying|travel)", "passengers"),
        (r"\bpay|\bpayment|\bcard\b|\bcharge", "payment"),
        (r"\bwhich (?:flight|option)|\bflight (?:would|do) you|\bprefer", "flight"),
    )
)


def detail_answers(asked: str, request: Request) -> list[str]:
    """Answers to the agent's questions about the current request's details."""
    out: list[str] = []
    for pattern, name in _DETAILS:
        if not pattern.search(asked):
            continue
        if name == "reason" and request.kind == "cancel":
            out.append(_REASONS.get(request.reason or "other", _REASONS["other"]))
        elif name == "cabin" and request.cabin:
            out.append(f"{CABIN_WORDS[request.cabin].capitalize()}, please.")
        elif name == "bags" and request.kind in ("book", "add_bags"):
            bags = request.total_bags or 0
            out.append(f"{bags} checked bags in total." if bags else "No checked bags, thanks.")
        elif name == "insurance" and request.kind == "book":
            out.append("Yes, I want insurance." if request.insurance else "No insurance, thanks.")
        elif name == "passengers" and request.passengers:
            out.append(f"The travellers are {_people(request.passengers)}.")
        elif name == "payment" and request.payment:
            out.append(say_payment(request.payment))
        elif name == "flight" and request.kind in ("book", "change_flights"):
            rules = [leg.rule for leg in request.legs]
            if request.trip is not None:
                rules = [r for r in (request.trip.outbound, request.trip.return_rule) if r]
            out.append("I want " + " and ".join(_rule(r) for r in rules) + ".")
    return list(dict.fromkeys(out))
