"""What every rule of the policy solver gets: the DB as the earlier requests left it, the intent,
the decisions so far, and helpers to build a decision."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.decisions import Call, Decision, Outcome
from airline_gym.domain.flight_options import Option, options, ranked, ties_in
from airline_gym.domain.intents import FlightRule, Intent, Request
from airline_gym.domain.records import Record
from airline_gym.errors import AirlineGymError
from airline_gym.taskgen.facts import reservation_read, user_read

#: The clause of a fallback the customer never asks (the request before it was granted).
NOT_ASKED = "not asked: the request before it was granted"


class SolverError(AirlineGymError, ValueError):
    """The intent cannot be decided (a malformed request, or a write the tools refuse)."""


@dataclass
class Context:
    """One request being decided: ``db`` already holds the earlier requests' writes."""

    db: AirlineDB
    intent: Intent
    earlier: tuple[Decision, ...]
    index: int
    request: Request
    #: Why a task resting on this decision would be ill-posed (see ``Decision.ill_posed``).
    ill_posed: list[str] = field(default_factory=list)
    #: How many fitting options of the picked kind (direct, one stop) each flight choice had
    #: (see ``Decision.choices``).
    choices: list[int] = field(default_factory=list)

    def choose(
        self, origin: str, destination: str, rule: FlightRule, cabin: str, passengers: int
    ) -> Option | None:
        """The option ``rule`` picks on the DB; a pick that ties with another option (a choice
        nobody states) is noted as ill-posed."""
        best = ranked(options(self.db, origin, destination, rule), rule, cabin, passengers)
        if ties_in(best, rule, cabin):
            self.ill_posed.append(f"{rule.pick} on {rule.date} ties {origin}-{destination}")
        chosen = best[rule.rank] if rule.rank < len(best) else None
        alike = [o for o in best if chosen and len(o.segments) == len(chosen.segments)]
        self.choices.append(len(alike))  # a direct pick among the directs listed first, ...
        return chosen

    def note_ties(
        self, legs: Iterable[tuple[str, str, FlightRule]], cabin: str, passengers: int
    ) -> None:
        """Note a tie in the flight choices a decision did not get to (declined before them):
        the customer's wish is unclear there all the same."""
        for origin, destination, rule in legs:
            best = ranked(options(self.db, origin, destination, rule), rule, cabin, passengers)
            if ties_in(best, rule, cabin):
                self.ill_posed.append(f"{rule.pick} on {rule.date} ties {origin}-{destination}")

    def decide(
        self,
        outcome: Outcome,
        clause: str,
        reads: Iterable[Call] = (),
        writes: Iterable[Call] = (),
        say: Iterable[str] = (),
        amount: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> Decision:
        """A decision for this request; repeated reads are dropped, order kept."""
        unique: list[Call] = []
        for read in reads:
            if read not in unique:
                unique.append(read)
        return Decision(
            self.index,
            outcome,
            clause,
            tuple(unique),
            tuple(writes),
            tuple(say),
            amount,
            details,
            tuple(self.ill_posed),
            tuple(self.choices),
        )

    def unasked(self) -> Decision | None:
        """The decision on a fallback (``if_refused``) the customer does not ask: the request
        before it was granted (or itself not asked); no lookup, no action. None otherwise."""
        if not self.request.if_refused or not self.earlier:
            return None
        before = self.earlier[-1]
        if before.outcome == "granted" or before.clause == NOT_ASKED:
            return self.decide("declined", NOT_ASKED)
        return None

    def user(self, user_id: str | None = None) -> Record:
        """The intent's user (or another), which must exist."""
        uid = user_id or self.intent.user_id
        record = self.db.user(uid)
        if record is None:
            raise SolverError(f"request {self.index}: user {uid} is not in the DB")
        return record

    def reservation(self) -> tuple[Record | None, Decision | None]:
        """The request's reservation, or the refusal when it cannot be acted on."""
        rid = self.request.reservation_id
        if rid is None:
            raise SolverError(f"request {self.index} ({self.request.kind}) needs a reservation_id")
        record = self.db.reservation(rid)
        reads = self.reservation_reads(rid)
        if record is None:
            return None, self.decide("refused", "no such reservation", reads)
        if record["user_id"] != self.intent.user_id:
            return None, self.decide("refused", "only the owner may act on a reservation", reads)
        if record["status"] == "cancelled":
            return None, self.decide("refused", "the reservation is already cancelled", reads)
        return record, None

    def reservation_reads(self, reservation_id: str) -> list[Call]:
        """The lookups behind any decision on one reservation: the reservation, and first the
        profile when the customer does not know their reservation ids (policy: help locate it)."""
        found = [user_read(self.intent.user_id)] if "reservation_ids" in self.intent.unknown else []
        return [*found, reservation_read(reservation_id)]

    def payment_id(self, reservation: Record) -> str | None:
        """The single gift card or credit card the customer names for a change, else the
        reservation's original one (policy: one gift card or credit card from the profile)."""
        if self.request.payment:
            return self.request.payment[0].payment_id
        methods = self.user(reservation["user_id"])["payment_methods"]
        for entry in reservation["payment_history"]:
            method = methods.get(entry["payment_id"])
            if method is not None and method["source"] != "certificate":
                return str(entry["payment_id"])
        return None
