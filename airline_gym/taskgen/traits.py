"""A task's traits: what makes its customer harder than the plain one, computed from its intent
and the DB (at the DB's now, before any write).

``generate`` writes them as ``task["airline_gym"]["traits"]``; ``airline-gym tasks
--distribution`` counts them. The names (:data:`TRAITS`):

======================== ===================================================================
trait                    the task has it when
======================== ===================================================================
``unknown_reservation``  the customer does not know its reservation ids
                         (``"reservation_ids" in intent.unknown``)
``false_claim``          a request asserts something the DB contradicts (``Request.claim``)
``budget``               a request caps what it pays (``max_total``, or a flight rule's
                         ``max_price``)
``fallback``             a request is asked only if the one before it was refused
                         (``Request.if_refused``)
``under_way``            a request's reservation is partly flown: a segment landed or flying
                         and another neither flown nor cancelled (the reservation not
                         cancelled)
``correction``           an ``edit_passenger`` that corrects the passenger booked
                         (``replaces`` False)
``insists``              a request the customer pushes back on after a refusal (``insist`` > 0)
``persona:<style>``      the customer talks in that style (:data:`PERSONA_STYLES`)
======================== ===================================================================

>>> from airline_gym.domain.intents import Intent, Persona, Request
>>> intent = Intent("u", "U", (Request("add_insurance", "ABC123", insist=1),),
...                 persona=Persona(terse=True))
>>> task_traits(intent, None)
['insists', 'persona:terse']
"""

from __future__ import annotations

from collections.abc import Iterable

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.intents import PERSONA_STYLES, FlightRule, Intent, Request
from airline_gym.taskgen.facts import status_of, under_way

__all__ = ["TRAITS", "UNKNOWN", "task_traits"]

#: Every trait, in report order.
TRAITS: tuple[str, ...] = (
    "unknown_reservation",
    "false_claim",
    "budget",
    "fallback",
    "under_way",
    "correction",
    "insists",
    *(f"persona:{style}" for style in PERSONA_STYLES),
)
#: What ``tasks --distribution`` counts for a task with neither a traits field nor an intent.
UNKNOWN = "unknown"


def _rules(request: Request) -> Iterable[FlightRule]:
    if request.trip is not None:
        yield request.trip.outbound
        if request.trip.return_rule is not None:
            yield request.trip.return_rule
    for leg in request.legs:
        yield leg.rule


def _budget(request: Request) -> bool:
    return request.max_total is not None or any(r.max_price is not None for r in _rules(request))


def _under_way(db: AirlineDB, reservation_id: str | None) -> bool:
    reservation = db.reservation(reservation_id) if reservation_id else None
    if reservation is None or reservation["status"] == "cancelled":
        return False
    return under_way([status_of(db, s["flight_number"], s["date"]) for s in reservation["flights"]])


def task_traits(intent: Intent, db: AirlineDB | None) -> list[str]:
    """The traits of a task whose customer is ``intent``, in :data:`TRAITS` order. ``db``: the
    DB the task starts from (None: ``under_way`` is not looked up)."""
    requests = intent.requests
    found = {
        "unknown_reservation": "reservation_ids" in intent.unknown,
        "false_claim": any(r.claim is not None for r in requests),
        "budget": any(_budget(r) for r in requests),
        "fallback": any(r.if_refused for r in requests),
        "under_way": db is not None and any(_under_way(db, r.reservation_id) for r in requests),
        "correction": any(r.kind == "edit_passenger" and not r.replaces for r in requests),
        "insists": any(r.insist > 0 for r in requests),
    }
    found.update({f"persona:{s}": True for s in intent.persona.styles})
    return [t for t in TRAITS if found.get(t)]
