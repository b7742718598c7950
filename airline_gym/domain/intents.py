"""A customer's structured intent: who they are, what they know, and what they ask for, in order.

One :class:`Intent` describes the customer of one task. The generator (``airline_gym.taskgen``)
samples intents from the DB; the policy solver turns an intent and the DB into the agent's gold
actions; the scripted customer (``airline_gym.users``) plays the intent offline; the instructions
writer turns it into the second-person ``user_scenario.instructions`` an LLM customer plays.
Intents are also written by hand for benchmark tasks whose request this form can express.

An intent is plain data with a JSON form (:meth:`Intent.to_json` / :meth:`Intent.from_json`), kept
in a task record under ``task["airline_gym"]["intent"]`` (a key the reference's ``Task`` model
ignores). Pure: no I/O, no DB access.

Requests, by ``kind`` (the fields each reads; unread fields keep their defaults):

=================== ===========================================================================
kind                fields
=================== ===========================================================================
``book``            ``trip`` (origin, destination, one_way/round_trip, a :class:`FlightRule` per
                    direction), ``cabin``, ``passengers``, ``total_bags``, ``insurance``,
                    ``payment``
``cancel``          ``reservation_id``, ``reason``
``change_flights``  ``reservation_id``, ``legs`` (which direction changes: ``outbound``,
                    ``return`` or both, each with a :class:`FlightRule`), ``cabin`` (None: keep),
                    ``payment``
``change_cabin``    ``reservation_id``, ``cabin``, ``payment``
``add_bags``        ``reservation_id``, ``total_bags`` (the new total), ``payment``
``edit_passenger``  ``reservation_id``, ``passenger_index``, ``new_passenger``, ``replaces`` (True:
                    someone else travels instead; False: a correction of the one booked)
``change_count``    ``reservation_id``, ``passengers`` (the wanted list; the policy refuses)
``add_insurance``   ``reservation_id`` (the policy refuses insurance after booking)
``compensation``    ``reservation_id``, ``flight_number``, ``flight_date``, ``complaint``
``info``            ``question`` (a :data:`QUESTIONS` key), ``reservation_id`` where it asks
                    about one reservation, ``payment`` (one part) for ``change_total``
=================== ===========================================================================

Every kind that charges (``book``, ``change_flights``, ``change_cabin``, ``add_bags``) also reads
``max_total``, the customer's cap on the whole charge. Any request may carry a ``claim`` (a
:data:`CLAIMS` key): something the customer asserts and the DB contradicts. Any request but the
first may be a fallback (``if_refused``): asked only when the one before it was refused or
declined.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from airline_gym.domain.typed_json import build

__all__ = [
    "CABINS",
    "CABIN_WORDS",
    "CLAIMS",
    "COMPLAINTS",
    "KINDS",
    "PERSONA_STYLES",
    "QUESTIONS",
    "REASONS",
    "FlightRule",
    "Intent",
    "Leg",
    "Passenger",
    "PaymentPart",
    "Persona",
    "Request",
    "Trip",
]

Cabin = Literal["basic_economy", "economy", "business"]
CABINS: tuple[str, ...] = ("basic_economy", "economy", "business")
#: Each cabin as a customer says it ("basic economy").
CABIN_WORDS: dict[str, str] = {cabin: cabin.replace("_", " ") for cabin in CABINS}

KINDS: tuple[str, ...] = (
    "book",
    "cancel",
    "change_flights",
    "change_cabin",
    "add_bags",
    "edit_passenger",
    "change_count",
    "add_insurance",
    "compensation",
    "info",
)

#: Why a customer cancels (the policy's insurance covers ``health`` and ``weather``).
REASONS: tuple[str, ...] = ("change_of_plan", "airline_cancelled", "health", "weather", "other")

#: What a compensation request complains about.
COMPLAINTS: tuple[str, ...] = ("cancelled", "delayed")

#: What a customer may claim that its account contradicts (``Request.claim``): a gold
#: membership it does not have, a flight the airline cancelled (as the reason to cancel), travel
#: insurance it did not buy, a flight cancelled or delayed that was not (for compensation), and
#: an earlier agent's promise of what it asks for. The policy decides from the DB, never from
#: the claim.
CLAIMS: tuple[str, ...] = (
    "gold_member",
    "airline_cancelled",
    "insured",
    "cancelled",
    "delayed",
    "promised",
)

#: Information-only questions: the answer is a number the agent must say (``communicate_info``).
QUESTIONS: dict[str, str] = {
    "total_upcoming_cost": (
        "the total price paid for all upcoming reservations: those not cancelled with a flight"
        " still to take (not flown, not cancelled), a trip under way included"
    ),
    "reservation_cost": "the total price paid for one reservation",
    "gift_card_balance": "the sum of the balances of all gift cards on the profile",
    "certificate_balance": "the sum of the amounts of all certificates on the profile",
    "bag_allowance": "the free checked bags one reservation allows in all (all its passengers)",
    "change_total": (
        "the net amount the earlier requests' bookings and changes charged (refunds said as a"
        " positive number), on the one payment method named in ``payment`` if any"
    ),
}


_CLOCK_RE = re.compile(r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]")


@dataclass(frozen=True)
class FlightRule:
    """How the customer picks a flight among those the agent can find.

    ``pick``: ``cheapest`` or ``earliest`` or ``latest`` (departure) or ``fastest`` (departure
    to arrival, layover included) in the cabin among the available options on ``date`` (direct
    only, unless ``direct_only`` is False: then one-stops compete too), or ``exact`` (the given
    ``flight_numbers``, in order, one per segment). ``rank``: 0 takes the best option by
    ``pick``, 1 the second best, ... ``depart_after`` / ``depart_before`` / ``arrive_before``:
    ``HH:MM:SS`` bounds (inclusive) on the first departure and the last arrival; an arrival on
    the next day is later than any time. ``max_price``: the customer's budget cap per passenger
    for this leg (None: no cap); over it the customer declines.
    """

    date: str
    pick: Literal["cheapest", "earliest", "latest", "fastest", "exact"] = "cheapest"
    direct_only: bool = True
    flight_numbers: tuple[str, ...] = ()
    max_price: int | None = None
    rank: int = 0
    depart_after: str | None = None
    depart_before: str | None = None
    arrive_before: str | None = None

    def __post_init__(self) -> None:
        # what a file holds is read as the customer reads it: a bad date or clock is refused here
        try:
            dt.date.fromisoformat(self.date)
        except ValueError:
            raise ValueError(f"date must be a date YYYY-MM-DD, not {self.date!r:.40}") from None
        for name in ("depart_after", "depart_before", "arrive_before"):
            value = getattr(self, name)
            if value is not None and not _CLOCK_RE.fullmatch(value):
                raise ValueError(f"{name} must be a time HH:MM:SS, not {value!r:.40}")


@dataclass(frozen=True)
class Trip:
    """Where a new booking goes: ``return_rule`` is None for a one-way trip."""

    origin: str
    destination: str
    outbound: FlightRule
    return_rule: FlightRule | None = None

    @property
    def trip_type(self) -> str:
        """``one_way`` or ``round_trip``, as ``book_reservation`` takes it."""
        return "one_way" if self.return_rule is None else "round_trip"


@dataclass(frozen=True)
class Leg:
    """One direction of a reservation to move to new flights (``outbound`` or ``return``).

    ``destination``: where the customer wants this direction to end, when not where it ends
    now (None: unchanged); the policy keeps origin and destination, so it refuses.
    """

    direction: Literal["outbound", "return"]
    rule: FlightRule
    destination: str | None = None


@dataclass(frozen=True)
class Passenger:
    """A passenger as ``book_reservation`` and ``update_reservation_passengers`` take it."""

    first_name: str
    last_name: str
    dob: str


@dataclass(frozen=True)
class PaymentPart:
    """One payment method the customer names, and how much of the total goes on it.

    ``amount`` None means "the rest": parts without an amount are filled in order after the
    fixed ones, a gift card or certificate with as much of what is left as its balance covers,
    a credit card with all that is left (so a plan with one such part gives it the rest). For
    changes, fees and refunds a plan is a single part.
    """

    payment_id: str
    amount: int | None = None


@dataclass(frozen=True)
class Request:
    """One thing the customer asks for; see the module docstring for the fields each kind reads."""

    kind: str
    reservation_id: str | None = None
    trip: Trip | None = None
    legs: tuple[Leg, ...] = ()
    cabin: str | None = None
    passengers: tuple[Passenger, ...] = ()
    total_bags: int | None = None
    insurance: bool = False
    payment: tuple[PaymentPart, ...] = ()
    reason: str | None = None
    passenger_index: int | None = None
    new_passenger: Passenger | None = None
    flight_number: str | None = None
    flight_date: str | None = None
    complaint: str | None = None
    question: str | None = None
    #: How many times the customer pushes back after a refusal before accepting it (0 or 1).
    insist: int = 0
    #: The customer's cap on what this request charges in all (None: no cap); over it they
    #: decline. ``FlightRule.max_price`` caps one leg per passenger instead.
    max_total: int | None = None
    #: ``edit_passenger``: the new passenger is someone else, not a correction (a misspelt
    #: name, a wrong date of birth) of the one booked.
    replaces: bool = False
    #: Something the customer asserts that the DB contradicts (a :data:`CLAIMS` key; None:
    #: nothing false). It never changes what the policy decides.
    claim: str | None = None
    #: A fallback: the customer asks it only if the request before it was refused (or it
    #: declined that one); when that one is granted, it never asks this one.
    if_refused: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown request kind {self.kind!r} (one of {', '.join(KINDS)})")
        if self.reason is not None and self.reason not in REASONS:
            raise ValueError(f"unknown cancellation reason {self.reason!r}")
        if self.complaint is not None and self.complaint not in COMPLAINTS:
            raise ValueError(f"unknown complaint {self.complaint!r}")
        if self.question is not None and self.question not in QUESTIONS:
            raise ValueError(f"unknown question {self.question!r}")
        if self.cabin is not None and self.cabin not in CABINS:
            raise ValueError(f"unknown cabin {self.cabin!r}")
        if self.claim is not None and self.claim not in CLAIMS:
            raise ValueError(f"unknown claim {self.claim!r:.40} (one of {', '.join(CLAIMS)})")
        if self.insist not in (0, 1):
            raise ValueError(f"insist must be 0 or 1, not {self.insist!r:.40}")


#: The persona styles (:attr:`Persona.styles`), each a trait ``persona:<style>`` of a task.
PERSONA_STYLES: tuple[str, ...] = ("terse", "chatty", "impatient", "confused", "several_at_once")


@dataclass(frozen=True)
class Persona:
    """How the customer talks (never what it decides). ``terse`` answers in few words;
    ``patient`` False (impatient) ends the conversation sooner when the agent stalls and says
    so; ``chatty`` wraps its answers in small talk; ``confused`` gives details out of order and
    asks the agent to repeat; ``several_at_once`` states all its requests in its first message.
    How far it pushes back after a refusal is each request's ``insist``."""

    terse: bool = False
    patient: bool = True
    chatty: bool = False
    confused: bool = False
    several_at_once: bool = False

    @property
    def styles(self) -> tuple[str, ...]:
        """The styles this persona has, in :data:`PERSONA_STYLES` order (empty: plain)."""
        on = {
            "terse": self.terse,
            "chatty": self.chatty,
            "impatient": not self.patient,
            "confused": self.confused,
            "several_at_once": self.several_at_once,
        }
        return tuple(s for s in PERSONA_STYLES if on[s])


@dataclass(frozen=True)
class Intent:
    """The customer of one task.

    ``known``: what the customer can say when asked (``user_id``, ``name``, ``email``, ``dob``,
    ``reservation_ids`` as a comma-separated string, ...). ``unknown``: items the customer does
    not know and says so (for example ``reservation_ids``): never offered.
    """

    user_id: str
    name: str
    requests: tuple[Request, ...]
    known: Mapping[str, str] = field(default_factory=dict)
    unknown: tuple[str, ...] = ()
    persona: Persona = Persona()

    def __post_init__(self) -> None:
        if self.requests and self.requests[0].if_refused:
            raise ValueError("the first request cannot be a fallback (if_refused)")

    def to_json(self) -> dict[str, Any]:
        """The intent as JSON-ready data (defaults included, tuples as lists)."""
        data = asdict(self)
        data["known"] = dict(self.known)
        return json.loads(json.dumps(data))  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Intent:
        """Read :meth:`to_json`'s form back: a one-line ``ValueError`` naming the field for an
        unknown key or kind and for a value of the wrong type (every field is checked against
        its annotation, whole numbers are >= 0: :func:`~airline_gym.domain.typed_json.build`)."""
        intent: Intent = build(cls, data)
        return intent

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of the requests, in order."""
        return tuple(r.kind for r in self.requests)
