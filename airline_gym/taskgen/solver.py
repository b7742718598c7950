"""The policy solver: from the DB and a customer's intent, what the policy has the agent do.

:func:`solve` decides the intent's requests in order on a private copy of the DB, so a later
request sees the earlier ones' writes (a cabin upgraded before its bags are added; a
reservation cancelled before a new one is booked). Each write is run through the product's own
tools as it is decided, and a write the tools refuse is a :class:`SolverError`: the solver's
gold never fails. The rules live in :mod:`.rules_changes` and :mod:`.rules_trips`; the facts they
read in :mod:`.facts`.

>>> from airline_gym.domain.database import load_pristine
>>> from airline_gym.domain.intents import Intent, Request
>>> intent = Intent("raj_sanchez_7340", "Raj Sanchez",
...                 (Request("cancel", reservation_id="Q69X3R", reason="change_of_plan"),))
>>> decision = solve(load_pristine(), intent).decisions[0]
>>> decision.outcome, decision.writes
('refused', ())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from airline_gym.domain.database import AirlineDB, PristineDB
from airline_gym.domain.decisions import Call, Decision, Solution
from airline_gym.domain.intents import Intent
from airline_gym.domain.toolbox import execute
from airline_gym.taskgen import rules_changes, rules_trips
from airline_gym.taskgen.context import Context, SolverError

__all__ = ["RULES", "SolverError", "apply", "solve", "solve_on"]

#: The rule deciding each kind of request.
RULES: dict[str, Callable[[Context], Decision]] = {
    "book": rules_trips.book,
    "cancel": rules_trips.cancel,
    "change_flights": rules_changes.change_flights,
    "change_cabin": rules_changes.change_cabin,
    "add_bags": rules_changes.add_bags,
    "edit_passenger": rules_changes.edit_passenger,
    "change_count": rules_changes.change_count,
    "add_insurance": rules_changes.add_insurance,
    "compensation": rules_trips.compensation,
    "info": rules_trips.info,
}


def apply(db: AirlineDB, calls: Iterable[Call]) -> None:
    """Run ``calls`` through the product's tools on ``db``; a refused call is a SolverError."""
    for c in calls:
        result = execute(db, c.name, dict(c.arguments))
        if result.error:
            raise SolverError(f"{c.name}({dict(c.arguments)}) failed: {result.content}")


def solve_on(db: AirlineDB, intent: Intent) -> Solution:
    """Decide ``intent`` on ``db`` itself, leaving the decided writes applied to it."""
    decisions: list[Decision] = []
    for index, request in enumerate(intent.requests):
        ctx = Context(db, intent, tuple(decisions), index, request)
        decision = ctx.unasked() or RULES[request.kind](ctx)  # a fallback may go unasked
        apply(db, decision.writes)
        decisions.append(decision)
    return Solution(tuple(decisions))


def solve(db: PristineDB | AirlineDB, intent: Intent) -> Solution:
    """The policy's decisions for ``intent``: the pristine DB or an episode's (left unchanged)."""
    view = db.fork() if isinstance(db, PristineDB) else db.copy()
    return solve_on(view, intent)
