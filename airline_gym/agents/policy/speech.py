"""What the policy-following agent says: its proposals (every detail of a write), and the
wordings it can confirm, refuse and ask for payment with.

A :class:`Wording` picks one phrase of each kind; the audit plays the agent with each
(:data:`CONFIRMS`, :data:`REFUSALS`, :data:`PAYMENT_ASKS`): a reward that a correct agent earns
with one phrase and not another pays for words, not behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from airline_gym.domain.decisions import Call, Decision
from airline_gym.domain.intents import CABIN_WORDS, Request

__all__ = [
    "CONFIRMS",
    "HANDOFF",
    "PAYMENT_ASKS",
    "REFUSALS",
    "Wording",
    "details_question",
    "done_text",
    "figure_text",
    "proposal",
]

#: Asking for an explicit yes after the details (the first is the base wording).
CONFIRMS: tuple[str, ...] = (
    "Would you like me to proceed?",
    "May I make this change for you?",
    "Is that alright with you?",
    "Does that work for you?",
    "Do I have your go-ahead?",
)
#: Saying no to what the policy does not allow (the first is the base wording).
REFUSALS: tuple[str, ...] = (
    "I'm sorry, but our policy does not allow this request.",
    "This request doesn't qualify under our airline policy.",
    "That is outside what our airline policy lets me do for you.",
    "Our airline policy rules this out, so I have to decline.",
)
#: Asking how the customer pays (the first is the base wording).
PAYMENT_ASKS: tuple[str, ...] = (
    "Which payment method would you like to use?",
    "Please let me know the payment method you'd like to use.",
)
#: The fixed hand-off message of the policy.
HANDOFF = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."


@dataclass(frozen=True)
class Wording:
    """One choice of phrases: indexes into :data:`CONFIRMS`, :data:`REFUSALS`,
    :data:`PAYMENT_ASKS`."""

    confirm: int = 0
    refuse: int = 0
    pay: int = 0

    @property
    def confirm_text(self) -> str:
        return CONFIRMS[self.confirm]

    @property
    def refuse_text(self) -> str:
        return REFUSALS[self.refuse]

    @property
    def pay_text(self) -> str:
        return PAYMENT_ASKS[self.pay]

    @property
    def label(self) -> str:
        """``base``, or what differs from it (``confirm 2``, ``refuse 3``, ``pay 2``)."""
        parts = [
            f"{name} {index + 1}"
            for name, index in (
                ("confirm", self.confirm),
                ("refuse", self.refuse),
                ("pay", self.pay),
            )
            if index
        ]
        return ", ".join(parts) or "base"


def _cabin(value: Any) -> str:
    return CABIN_WORDS.get(str(value), str(value))


def _flights(legs: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{f.get('flight_number')} on {f.get('date')}" for f in legs)


def _money(amount: float) -> str:
    return f"${int(amount)}" if float(amount).is_integer() else f"${amount:.2f}"


def _difference(total: int | None, payment_id: Any) -> str:
    if not total:
        return "There is no price difference."
    if total < 0:
        return f"You get {_money(-total)} back on {payment_id}."
    return f"The price difference of {_money(total)} goes on {payment_id}."


def proposal(write: Call, decision: Decision | None = None) -> str:
    """A write's details as the agent lists them before it asks for a yes."""
    args = dict(write.arguments)
    rid = args.get("reservation_id", "")
    amount = decision.amount if decision is not None else None
    if write.name == "book_reservation":
        people = ", ".join(
            f"{p['first_name']} {p['last_name']} (born {p['dob']})" for p in args["passengers"]
        )
        paid = " and ".join(
            f"{_money(m['amount'])} on {m['payment_id']}" for m in args["payment_methods"]
        )
        way = "round-trip" if args["flight_type"] == "round_trip" else "one-way"
        insured = (
            "with travel insurance" if args["insurance"] == "yes" else "without travel insurance"
        )
        return (
            f"I can book a new {way} reservation from {args['origin']} to {args['destination']}"
            f" in {_cabin(args['cabin'])} on {_flights(args['flights'])}, for {people}, with"
            f" {args['total_baggages']} checked bags ({args['nonfree_baggages']} paid), {insured}."
            f" The total is {_money(amount or 0)}: {paid}."
        )
    if write.name == "cancel_reservation":
        refund = f" The refund of {_money(amount)}" if amount else " The refund"
        return f"I can cancel reservation {rid}.{refund} goes back to the original payment methods."
    if write.name == "update_reservation_flights":
        return (
            f"I can change reservation {rid} to {_cabin(args['cabin'])} on"
            f" {_flights(args['flights'])}. {_difference(amount, args['payment_id'])}"
        )
    if write.name == "update_reservation_baggages":
        fee = f"{_money(amount)} on {args['payment_id']}" if amount else "no fee"
        return (
            f"I can set reservation {rid} to {args['total_baggages']} checked bags,"
            f" {args['nonfree_baggages']} of them paid bags: {fee}."
        )
    if write.name == "update_reservation_passengers":
        people = ", ".join(
            f"{p['first_name']} {p['last_name']} (born {p['dob']})" for p in args["passengers"]
        )
        return f"I can update the passenger details of reservation {rid} to: {people}."
    if write.name == "send_certificate":
        return f"I can issue a travel certificate of {_money(args['amount'])} to your account."
    return f"I can make this change: {write.name}."


def done_text(write: Call) -> str:
    """What the agent says once a write went through."""
    rid = write.arguments.get("reservation_id", "")
    return {
        "book_reservation": "Your new reservation has been booked.",
        "cancel_reservation": f"Reservation {rid} has been cancelled.",
        "send_certificate": "The certificate has been issued to your account.",
    }.get(write.name, f"Reservation {rid} has been updated.")


def figure_text(value: str) -> str:
    """The answer to a question about a figure (as the policy's solver writes it)."""
    return f"That comes to ${value}."


def details_question(request: Request, wording: Wording) -> str | None:
    """The question for the details a request of this kind needs from the customer (None:
    nothing to ask): the reason of a cancellation; the travellers, bags and insurance of a
    booking; the payment method of anything that charges."""
    asks = []
    if request.kind == "cancel":
        asks.append("What is the reason for the cancellation?")
    if request.kind == "book":
        asks += [
            "Who is travelling, and when was each traveller born?",
            "How many checked bags will there be in total?",
            "Would you like travel insurance?",
        ]
    if request.kind in ("book", "change_flights", "change_cabin", "add_bags"):
        asks.append(wording.pay_text)
    return " ".join(asks) if asks else None


def cabin_words(cabin: str | None) -> str:
    """A cabin as the agent says it."""
    return _cabin(cabin)
