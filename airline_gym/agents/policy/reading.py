"""What an agent reads in the offline customer's words: its requests and the details it gives.

The offline customer (:mod:`airline_gym.users.intent_words`) speaks a wording of ours, so an agent
that only sees the conversation can read it back exactly: :func:`read_requests` finds the request
statements in a customer turn, :func:`read_details` fills a request's details from the answers
(reason, cabin, bags, insurance, travellers, payment). The enumerations (reasons, questions,
cabins) are read off the customer's own phrase functions; the sentence shapes are regular
expressions here, and ``tests/agents/test_policy_reading.py`` says every generated request and its
answers back through them, so a change of wording fails that test, not the agent silently.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from airline_gym.domain.intents import (
    CABIN_WORDS,
    QUESTIONS,
    REASONS,
    FlightRule,
    Leg,
    Passenger,
    PaymentPart,
    Request,
    Trip,
)
from airline_gym.users.intent_persona import AGENDA_RE_TEXT
from airline_gym.users.intent_words import detail_answers, say_request

__all__ = [
    "AGENDA_RE",
    "USER_ID_RE",
    "read_details",
    "read_name",
    "read_requests",
    "read_rule",
    "read_trip",
    "said_no",
    "said_yes",
]

_DATE = r"\d{4}-\d{2}-\d{2}"
_CABIN = r"basic economy|economy|business"
_NAME = r"[A-Z][A-Za-z'-]*"
_PAYMENT_ID = r"(?:credit_card|gift_card|certificate)_\d+"
USER_ID_RE = re.compile(r"\buser id is ([a-z]+(?:_[a-z]+)+_\d{3,})\b", re.I)
#: A several-at-once customer's opening: the request statements after it are its to-do list.
AGENDA_RE = re.compile(AGENDA_RE_TEXT)
_NAME_RE = re.compile(rf"\bMy name is ({_NAME}) ({_NAME})\b")
_NTH = ("first", "second", "third", "fourth", "fifth")

#: One flight rule as the customer says it (``intent_words._rule``), captured whole.
_RULE = (
    rf"flight HAT\d{{3}}(?: then HAT\d{{3}})* on {_DATE}"
    rf"|the (?:\w+ )?(?:cheapest|earliest|latest|fastest)"
    rf" (?:direct flight|flight \(direct or one stop is fine\)) on {_DATE}"
    rf"(?:, (?:leaving after|leaving before|arriving before) \d{{2}}:\d{{2}})*"
)
_RULE_PARTS = re.compile(
    rf"the (?:(?P<nth>second|third|fourth|fifth|number (?P<n>\d+)) )?"
    rf"(?P<pick>cheapest|earliest|latest|fastest) (?P<stops>direct flight|flight \(direct or one"
    rf" stop is fine\)) on (?P<date>{_DATE})(?P<bounds>(?:, (?:leaving after|leaving before|"
    rf"arriving before) \d{{2}}:\d{{2}})*)$"
)
_EXACT = re.compile(rf"flight (?P<numbers>HAT\d{{3}}(?: then HAT\d{{3}})*) on (?P<date>{_DATE})$")
_BOUND = re.compile(r"(leaving after|leaving before|arriving before) (\d{2}:\d{2})")
#: How the customer names its reservation (``IntentPlayer._which``).
_WHICH = (
    r"my reservation (?P<rid>[A-Z0-9]{6})\b|my reservation from [^.:,]+(?:, [^.:]+)?"
    r"|my upcoming reservation"
)

#: A reservation named by its trip (``taskgen.asks.trip_words``), when the customer has no id.
_TRIP_RE = re.compile(
    rf"my reservation (from [A-Z]{{3}}(?: to [A-Z]{{3}})?, first flight on {_DATE})"
)

_BOOK = re.compile(
    rf"I'd like to book a (?P<way>one-way|round) trip from (?P<o>[A-Z]{{3}}) to (?P<d>[A-Z]{{3}})"
    rf" in (?P<cabin>{_CABIN}): (?P<out>{_RULE}) going out"
    rf"(?:, and (?P<back>{_RULE}) coming back)?\."
)
_CHANGE = re.compile(
    rf"I'd like to change the (?P<dir1>outbound|return) flight to (?P<rule1>{_RULE})(?: and the"
    rf" (?P<dir2>outbound|return) flight to (?P<rule2>{_RULE}))? on (?:{_WHICH})\."
    r"(?P<ends>(?: The (?:outbound|return) flight should end in [A-Z]{3} instead\.)*)"
)
_ENDS = re.compile(r"The (outbound|return) flight should end in ([A-Z]{3}) instead\.")
_EDIT = re.compile(
    rf"I need to (?P<how>correct|replace) the (?P<nth>\w+|number \d+) passenger on (?:{_WHICH})"
    rf"(?:: it should be| with someone else:) (?P<first>{_NAME}) (?P<last>{_NAME}),"
    rf" born (?P<dob>{_DATE})\."
)
_COUNT = re.compile(rf"I'd like to change the travellers on (?:{_WHICH}) to (?P<people>[^.]+\))\.")
_CANCEL = re.compile(rf"I'd like to cancel (?:{_WHICH})\.")
_CABIN_CHANGE = re.compile(
    rf"I'd like to change the cabin on (?:{_WHICH}) to (?P<cabin>{_CABIN})\."
)
_BAGS = re.compile(rf"I'd like to add checked bags to (?:{_WHICH}), (?P<bags>\d+) in total\.")
_INSURANCE = re.compile(rf"I'd like to add travel insurance to (?:{_WHICH})\.")
_COMPENSATION = re.compile(
    rf"My flight (?P<flight>HAT\d{{3}}) on (?P<date>{_DATE}) was (?P<complaint>cancelled|delayed)\."
)
_PEOPLE = re.compile(rf"({_NAME}) ({_NAME}) \(born ({_DATE})\)")
_BAGS_ANSWER = re.compile(r"\b(\d+) checked bags in total\.|\b(No) checked bags, thanks\.")
_PUT = re.compile(rf"\$(\d+) on ({_PAYMENT_ID})")
_YES_RE = re.compile(r"^\W*(?:yes|yeah|yep|sure|ok|okay|sounds good|please do|go ahead)\b", re.I)
_NO_RE = re.compile(r"^\W*(?:no|nope|not really)\b", re.I)


def _cabin(words: str) -> str:
    return words.lower().replace(" ", "_")


def read_rule(text: str) -> FlightRule | None:
    """A flight rule as ``intent_words`` says it (its budget cap is never said)."""
    exact = _EXACT.match(text)
    if exact:
        numbers = tuple(exact["numbers"].split(" then "))
        return FlightRule(date=exact["date"], pick="exact", flight_numbers=numbers)
    parts = _RULE_PARTS.match(text)
    if parts is None:
        return None
    rank = 0
    if parts["n"]:
        rank = int(parts["n"]) - 1
    elif parts["nth"]:
        rank = _NTH.index(parts["nth"])
    bounds = {kind: f"{hhmm}:00" for kind, hhmm in _BOUND.findall(parts["bounds"] or "")}
    return FlightRule(
        date=parts["date"],
        pick=parts["pick"],  # type: ignore[arg-type]
        direct_only=parts["stops"] == "direct flight",
        rank=rank,
        depart_after=bounds.get("leaving after"),
        depart_before=bounds.get("leaving before"),
        arrive_before=bounds.get("arriving before"),
    )


@cache
def _questions() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each question as the customer asks it (read off ``say_request``), with its key."""
    out = []
    for question in QUESTIONS:
        text = say_request(Request("info", question=question), "\0")
        pattern = re.escape(text).replace("\0", f"(?:{_WHICH})")
        pattern = pattern.replace(re.escape("? Just"), rf"(?:, on (?P<pay>{_PAYMENT_ID}))?\? Just")
        out.append((re.compile(pattern), question))
    return tuple(out)


@cache
def _reasons() -> tuple[tuple[str, str], ...]:
    """Each cancellation reason as the customer says it, with its key."""
    return tuple(
        (detail_answers("What is the reason?", Request("cancel", reason=r))[0], r) for r in REASONS
    )


def _rid(match: re.Match[str]) -> str | None:
    return match.groupdict().get("rid")


def _found(text: str) -> list[tuple[int, Request]]:
    """(position, request) for each request statement in ``text``."""
    out: list[tuple[int, Request]] = []
    for m in _BOOK.finditer(text):
        out_rule, back = read_rule(m["out"]), m["back"] and read_rule(m["back"])
        if out_rule is not None:
            trip = Trip(m["o"], m["d"], out_rule, back or None)
            out.append((m.start(), Request("book", trip=trip, cabin=_cabin(m["cabin"]))))
    for m in _CHANGE.finditer(text):
        legs = []
        ends = dict(_ENDS.findall(m["ends"] or ""))
        for d, r in ((m["dir1"], m["rule1"]), (m["dir2"], m["rule2"])):
            rule = read_rule(r) if r else None
            if d and rule is not None:
                legs.append(Leg(d, rule, ends.get(d)))  # type: ignore[arg-type]
        out.append((m.start(), Request("change_flights", reservation_id=_rid(m), legs=tuple(legs))))
    for m in _EDIT.finditer(text):
        nth = m["nth"]
        index = int(nth.split()[-1]) - 1 if nth.startswith("number") else _NTH.index(nth)
        new = Passenger(m["first"], m["last"], m["dob"])
        request = Request(
            "edit_passenger",
            _rid(m),
            passenger_index=index,
            new_passenger=new,
            replaces=m["how"] == "replace",
        )
        out.append((m.start(), request))
    for m in _COUNT.finditer(text):
        people = tuple(Passenger(*p) for p in _PEOPLE.findall(m["people"]))
        out.append((m.start(), Request("change_count", _rid(m), passengers=people)))
    simple: tuple[tuple[re.Pattern[str], str], ...] = (
        (_CANCEL, "cancel"),
        (_CABIN_CHANGE, "change_cabin"),
        (_BAGS, "add_bags"),
        (_INSURANCE, "add_insurance"),
    )
    for pattern, kind in simple:
        for m in pattern.finditer(text):
            fields = m.groupdict()
            cabin = _cabin(fields["cabin"]) if fields.get("cabin") else None
            bags = int(fields["bags"]) if fields.get("bags") else None
            out.append((m.start(), Request(kind, _rid(m), cabin=cabin, total_bags=bags)))
    for m in _COMPENSATION.finditer(text):
        request = Request(
            "compensation",
            flight_number=m["flight"],
            flight_date=m["date"],
            complaint=m["complaint"],
        )
        out.append((m.start(), request))
    for pattern, question in _questions():
        for m in pattern.finditer(text):
            pay = (PaymentPart(m["pay"]),) if m["pay"] else ()
            out.append((m.start(), Request("info", _rid(m), question=question, payment=pay)))
    return sorted(out, key=lambda found: found[0])


def read_requests(text: str) -> list[Request]:
    """The request statements in one customer turn, in the order said."""
    return [request for _, request in _found(text)]


def read_trip(text: str) -> str | None:
    """The trip the customer names its reservation by (``from ATL to JFK, first flight on
    2024-05-20``), when it gives no id."""
    m = _TRIP_RE.search(text)
    return m[1] if m else None


def read_name(text: str) -> tuple[str, str] | None:
    """The customer's (first, last) name when it says it."""
    m = _NAME_RE.search(text)
    return (m[1], m[2]) if m else None


def _payment(text: str) -> tuple[PaymentPart, ...]:
    """The payment plan said in ``text`` (ids in the order said, fixed amounts where said)."""
    ids: list[str] = []
    for sentence in re.split(r"(?<=\.)\s+", text):
        if re.search(r"\bpay\b|\buse\b|\bput\b", sentence):
            ids += [i for i in re.findall(_PAYMENT_ID, sentence) if i not in ids]
    amounts = {pid: int(amount) for amount, pid in _PUT.findall(text)}
    return tuple(PaymentPart(pid, amounts.get(pid)) for pid in ids)


def read_details(text: str, request: Request) -> Request:
    """``request`` with the details the customer gives in ``text`` filled in."""
    changes: dict[str, object] = {}
    for phrase, reason in _reasons():
        if phrase in text and request.kind == "cancel":
            changes["reason"] = reason
    for cabin, words in CABIN_WORDS.items():
        if f"{words.capitalize()}, please." in text:
            changes["cabin"] = cabin
    bags = _BAGS_ANSWER.search(text)
    if bags:
        changes["total_bags"] = 0 if bags[2] else int(bags[1])
    if "Yes, I want insurance." in text:
        changes["insurance"] = True
    elif "No insurance, thanks." in text:
        changes["insurance"] = False
    travellers = re.search(r"The travellers are ([^.]+\))\.", text)
    if travellers:
        changes["passengers"] = tuple(Passenger(*p) for p in _PEOPLE.findall(travellers[1]))
    payment = _payment(text)
    if payment:
        changes["payment"] = payment
    return replace(request, **changes) if changes else request  # type: ignore[arg-type]


def said_yes(text: str) -> bool:
    """Whether the customer's turn begins with a yes."""
    return bool(_YES_RE.search(text))


def said_no(text: str) -> bool:
    """Whether the customer's turn begins with a no."""
    return bool(_NO_RE.search(text))
