"""The customer's instructions of a generated task, written from its intent and its solution.

:func:`write_instructions` gives ``user_scenario.instructions`` in the benchmark's shape
(``domain``, ``reason_for_call``, ``known_info``, ``unknown_info``, ``task_instructions``), in
the second person and in our own words, for the reference's LLM customer. The text pins every
choice that changes the DB (flight rule, cabin, passengers, bags, insurance, payment split,
refund method, cancellation reason) and uses the benchmark's patterns: one request after
another, pushing back once, accepting a refusal, a budget cap, "if the agent says ..., then ...".
Pure: no I/O.

>>> from airline_gym.domain.intents import Intent, Request
>>> intent = Intent("ada_lee_1234", "Ada Lee", (Request("cancel", "ABC123", reason="health"),),
...                 known={"reservation_ids": "ABC123"})
>>> text = write_instructions(intent, Solution(()))
>>> text["known_info"]
'You are Ada Lee.\\nYour user id is ada_lee_1234.\\nYour reservation id is ABC123.'
>>> text["reason_for_call"]
'You want to cancel your reservation ABC123.'
"""

from __future__ import annotations

from collections.abc import Sequence

from airline_gym.domain.decisions import Decision, Solution
from airline_gym.domain.intents import (
    CABIN_WORDS,
    FlightRule,
    Intent,
    Passenger,
    PaymentPart,
    Request,
)
from airline_gym.taskgen.asks import fallback_condition
from airline_gym.taskgen.claims import claim_instruction
from airline_gym.taskgen.context import NOT_ASKED
from airline_gym.taskgen.personas import agenda_line, persona_lines

__all__ = ["cabin_words", "reason_words", "rule_words", "write_instructions"]


#: How the customer says why they cancel (insurance covers health and weather).
_REASON = {
    "change_of_plan": "your plans have changed",
    "airline_cancelled": "the airline cancelled one of the flights",
    "health": "you are unwell and a doctor told you not to travel",
    "weather": "a storm is expected where you are going",
    "other": "something came up at work",
}
#: The information-only questions as the customer asks them ("{which}": the reservation).
_ASK = {
    "total_upcoming_cost": "how much you paid in all for your upcoming reservations (each one"
    " not cancelled that still has a flight to take, a trip you are in the middle of included)",
    "reservation_cost": "how much you paid in all for {which}",
    "gift_card_balance": "how much is left on your gift cards, added together",
    "certificate_balance": "how much your travel certificates are worth, added together",
    "bag_allowance": "how many checked bags {which} includes for free, all passengers together",
    "change_total": "how much the changes you ask for today come to in all",
}
_ORDINAL = ("first", "second", "third", "fourth", "fifth")
_ITEM_WORDS = {
    "user_id": "user id",
    "reservation_ids": "reservation id",
    "dob": "date of birth",
    "email": "email address",
    "name": "name",
}


def cabin_words(cabin: str) -> str:
    """A cabin as a customer says it (``basic_economy`` -> ``basic economy``)."""
    return CABIN_WORDS.get(cabin, cabin.replace("_", " "))


def reason_words(reason: str | None) -> str:
    """Why the customer cancels, in the second person."""
    return _REASON.get(reason or "other", _REASON["other"])


def _clock(value: str) -> str:
    return value[:5] if value.endswith(":00") else value


def rule_words(rule: FlightRule, cabin: str | None = None) -> str:
    """How the customer picks a flight: ``the cheapest economy direct flight on 2024-05-20``."""
    where = f" {cabin_words(cabin)}" if cabin else ""
    if rule.pick == "exact":
        numbers = " then ".join(rule.flight_numbers) or "the flight you name"
        return f"flight {numbers} on {rule.date}"
    stops = "direct flight" if rule.direct_only else "flight, direct or with one stop,"
    nth = ("", "second ", "third ", "fourth ", "fifth ")
    rank = nth[rule.rank] if 0 <= rule.rank < len(nth) else f"number {rule.rank + 1} "
    pick = {"fastest": "fastest", "cheapest": "cheapest"}.get(rule.pick, rule.pick)
    bounds = [
        f"leaving after {_clock(rule.depart_after)}" if rule.depart_after else "",
        f"leaving before {_clock(rule.depart_before)}" if rule.depart_before else "",
        f"arriving before {_clock(rule.arrive_before)}" if rule.arrive_before else "",
    ]
    among = ", ".join(b for b in bounds if b)
    how = {
        "cheapest": "",
        "fastest": " (shortest time from first departure to last arrival)",
        "earliest": " (by departure time)",
        "latest": " (by departure time)",
    }.get(rule.pick, "")
    text = f"the {rank}{pick}{where} {stops} on {rule.date}{how}"
    return f"{text}, among those {among}" if among else text


def _money(amount: int | float) -> str:
    return f"${amount:,.0f}" if float(amount).is_integer() else f"${amount:,.2f}"


def _payment(parts: Sequence[PaymentPart], what: str) -> str:
    if not parts:
        return ""
    if len(parts) == 1:
        return f"For {what}, use only {parts[0].payment_id} from your profile."
    fixed = [f"{_money(p.amount)} on {p.payment_id}" for p in parts if p.amount is not None]
    rest = [p.payment_id for p in parts if p.amount is None]
    said = []
    if fixed:
        said.append("put " + ", ".join(fixed))
    if len(rest) == 1:
        said.append(f"put the rest on {rest[0]}")
    elif rest:
        said.append(
            "then use " + ", then ".join(rest) + ", in that order, each for as much as it "
            "covers (a credit card takes whatever is left)"
        )
    return f"For {what}, " + "; ".join(said) + ". Do not use any other payment method."


def _person(p: Passenger) -> str:
    return f"{p.first_name} {p.last_name} (born {p.dob})"


def _which(reservation_id: str | None, intent: Intent) -> str:
    """The reservation as the customer names it (by id only when the customer knows it)."""
    if reservation_id and "reservation_ids" not in intent.unknown:
        return f"reservation {reservation_id}"
    trip = intent.known.get("trip")
    return f"your reservation {trip}" if reservation_id and trip else "your upcoming reservation"


def _reason_for(request: Request, intent: Intent) -> str:
    which = _which(request.reservation_id, intent)
    mine = which if which.startswith("your") else f"your {which}"
    kind = request.kind
    if kind == "book":
        trip = request.trip
        if trip is None:
            return "you want to book a flight"
        way = "a one-way trip" if trip.return_rule is None else "a round trip"
        return f"you want to book {way} from {trip.origin} to {trip.destination}"
    if kind == "info":
        return "you want to know " + _ASK.get(request.question or "", "").replace("{which}", mine)
    return {
        "cancel": f"you want to cancel {mine}",
        "change_flights": f"you want to move {mine} to other flights",
        "change_cabin": f"you want to change the cabin of {mine}",
        "add_bags": f"you want to add checked bags to {mine}",
        "edit_passenger": f"you want to correct a passenger's details on {mine}",
        "change_count": f"you want to change the number of passengers on {mine}",
        "add_insurance": f"you want to add travel insurance to {mine}",
        "compensation": f"you are unhappy about a {request.complaint or 'disrupted'} flight "
        f"and want something for the trouble",
    }[kind]


def _steps(request: Request, intent: Intent, decision: Decision | None) -> list[str]:
    """The sentences that pin one request's choices."""
    which = _which(request.reservation_id, intent)
    kind = request.kind
    out: list[str] = []
    if kind == "book" and request.trip is not None:
        trip = request.trip
        cabin = request.cabin or "economy"
        out.append(
            f"Going out, you want {rule_words(trip.outbound, cabin)} from {trip.origin} "
            f"to {trip.destination}."
        )
        if trip.return_rule is not None:
            out.append(f"Coming back, you want {rule_words(trip.return_rule, cabin)}.")
        people = "; ".join(_person(p) for p in request.passengers) or "only you"
        out.append(f"The travellers are: {people}.")
        bags = request.total_bags or 0
        out.append(
            f"You want {bags} checked bag{'s' if bags != 1 else ''} in total"
            if bags
            else "You do not want any checked bags"
        )
        out[-1] += (
            " and you want travel insurance."
            if request.insurance
            else (" and you do not want travel insurance.")
        )
        for way, rule in (("going out", trip.outbound), ("coming back", trip.return_rule)):
            if rule is not None and rule.max_price is not None:
                out.append(
                    f"You will pay at most {_money(rule.max_price)} per traveller for the flight "
                    f"{way}; if the flight your rule picks costs more, you do not book the trip."
                )
        out.append(_payment(request.payment, "the booking"))
    elif kind == "cancel":
        why = reason_words(request.reason)
        out.append(f"Cancel {which}. If the agent asks why, say that {why}.")
        out.append("The refund should go back to the way you paid.")
    elif kind == "change_flights":
        for leg in request.legs:
            where = (
                f"; you want it to end in {leg.destination} instead"
                if leg.destination
                else "; keep the same airports"
            )
            out.append(
                f"Move the {leg.direction} part of {which} to "
                f"{rule_words(leg.rule, request.cabin)}{where}."
            )
            if leg.rule.max_price:
                out.append(
                    f"You will not pay more than {_money(leg.rule.max_price)} per traveller "
                    f"for the new {leg.direction} flight; if it costs more, keep what you have."
                )
        out.append(
            "Keep the cabin you have."
            if request.cabin is None
            else f"Fly {cabin_words(request.cabin)} on the whole trip."
        )
        out.append(_payment(request.payment, "any price difference (charge or refund)"))
    elif kind == "change_cabin":
        cabin = cabin_words(request.cabin or "economy")
        out.append(f"Change every flight of {which} to {cabin}; keep the same flights.")
        out.append(_payment(request.payment, "any price difference (charge or refund)"))
    elif kind == "add_bags":
        bags = request.total_bags or 0
        out.append(f"You want {which} to have {bags} checked bags in total.")
        out.append(_payment(request.payment, "bags that are not free"))
    elif kind == "edit_passenger" and request.new_passenger is not None:
        index = request.passenger_index or 0
        nth = _ORDINAL[index] if index < len(_ORDINAL) else f"number {index + 1}"
        new = request.new_passenger
        if request.replaces:
            out.append(
                f"On {which}, the {nth} passenger is no longer travelling: someone else, "
                f"{new.first_name} {new.last_name}, born {new.dob}, takes that place. "
                "Nothing else changes."
            )
        else:
            out.append(
                f"On {which}, the {nth} passenger's details were booked wrong: they should read "
                f"{new.first_name} {new.last_name}, born {new.dob}. Nothing else changes."
            )
    elif kind == "change_count":
        people = "; ".join(_person(p) for p in request.passengers)
        out.append(f"You want {which} to carry exactly these travellers: {people}.")
    elif kind == "add_insurance":
        out.append(f"You want travel insurance on {which}.")
    elif kind == "compensation":
        what = "was cancelled" if request.complaint == "cancelled" else "was delayed"
        flight = f"flight {request.flight_number}" if request.flight_number else "your flight"
        on = f" on {request.flight_date}" if request.flight_date else ""
        out.append(f"Your {flight}{on} ({which}) {what}; ask what the airline can offer you.")
        out.append("Do not ask for any other change to the reservation.")
    elif kind == "info":
        if request.reservation_id:
            out.append(f"The question is about {which}.")
        if request.payment:
            out.append(f"You mean what went on {request.payment[0].payment_id}.")
        out.append("Ask for one total; if the agent lists separate amounts, ask for the sum.")
    if request.max_total is not None:
        out.append(
            f"You will pay at most {_money(request.max_total)} in all for this; "
            "if it costs more, you do not go ahead."
        )
    elif (
        decision is not None
        and decision.outcome == "declined"
        and kind != "book"
        and (decision.clause != NOT_ASKED)
    ):
        out.append("If it costs more than you are willing to pay, you do not go ahead.")
    out.append(claim_instruction(request))
    if request.insist:
        out.append(
            "If the agent says this cannot be done, push back once and ask for an exception; "
            "if the answer is still no, accept it."
        )
    else:
        out.append("If the agent says this cannot be done, accept it and move on.")
    return [s for s in out if s]


def _known(intent: Intent) -> str:
    lines = [f"You are {intent.name}.", f"Your user id is {intent.user_id}."]
    for key, value in intent.known.items():
        if key in ("user_id", "name") or key in intent.unknown:
            continue
        label = _ITEM_WORDS.get(key, key.replace("_", " "))
        if key == "trip":
            lines.append(f"The reservation you call about is your trip {value}.")
        elif key == "reservation_ids" and "," in value:
            ids = " and ".join(v.strip() for v in value.split(","))
            lines.append(f"Your reservation ids are {ids}.")
        else:
            lines.append(f"Your {label} is {value}.")
    return "\n".join(lines)


def _unknown(intent: Intent) -> str | None:
    items = [_ITEM_WORDS.get(k, k.replace("_", " ")) for k in intent.unknown]
    if not items:
        return None
    return "\n".join(f"You do not remember your {item}." for item in items)


def write_instructions(intent: Intent, solution: Solution) -> dict[str, str | None]:
    """``user_scenario.instructions`` for ``intent`` (see the module docstring)."""
    decisions = {d.request_index: d for d in solution.decisions}
    reasons = [_reason_for(r, intent) for r in intent.requests]
    reason = "You want help with your reservations."
    if reasons:
        first = reasons[0][0].upper() + reasons[0][1:]
        joins = [
            "; if that cannot be done, " if r.if_refused else "; then " for r in intent.requests
        ]
        reason = first + "".join(j + r for j, r in zip(joins[1:], reasons[1:], strict=True)) + "."
    blocks: list[str] = []
    many = len(intent.requests) > 1
    for i, request in enumerate(intent.requests):
        steps = " ".join(_steps(request, intent, decisions.get(i)))
        if request.if_refused:  # a fallback: asked only when the request before it is not done
            steps = f"{fallback_condition(i if many else None)} {steps}"
        blocks.append(f"{i + 1}. {steps}" if many else steps)
    if many:
        blocks.insert(0, agenda_line(intent.persona))
    blocks.append(
        "Say yes only to what is described here: if the agent offers a different flight, cabin, "
        "payment method or any other change, say no."
    )
    blocks += persona_lines(intent.persona)
    return {
        "domain": "airline",
        "reason_for_call": reason,
        "known_info": _known(intent),
        "unknown_info": _unknown(intent),
        "task_instructions": "\n\n".join(blocks),
    }
