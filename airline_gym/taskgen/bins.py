"""The bins of the mix: a request kind aimed at one outcome, with its proposer and weight.

The default weights keep about 40% of strict tasks free of DB changes, like the benchmark's 50
tasks (20-24 of them leave the DB unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass

from airline_gym.taskgen import claims
from airline_gym.taskgen.asks import (
    FALLBACK_COMBOS,
    cabin_to,
    fallback,
    over_budget,
    over_budget_proposer,
)
from airline_gym.taskgen.passengers import change_count, edit_passenger, replace_passenger
from airline_gym.taskgen.pools import ReservationFacts
from airline_gym.taskgen.proposals import (
    Build,
    Proposer,
    Test,
    add_bags,
    add_insurance,
    book,
    book_any,
    cancel,
    change_cabin,
    change_flights,
    change_flights_any,
    change_outbound,
    change_return,
    change_route,
    compensation,
    info,
    reservation_proposer,
)
from airline_gym.taskgen.under_way import flown_proposer

__all__ = ["BINS", "COMBOS", "Bin"]


@dataclass(frozen=True)
class Bin:
    """A request kind aimed at one outcome; ``changes_db``: whether that outcome writes.

    A bin about one reservation has ``test`` (which reservations fit) and ``build`` (the request
    for one); combinations on one reservation pick from the reservations every bin's test
    passes. ``lookups`` False: the policy decides it without looking anything up, so strict
    grading cannot tell a correct refusal from doing nothing; it comes only in combinations.
    """

    name: str
    kind: str
    outcome: str
    changes_db: bool
    weight: float
    propose: Proposer
    test: Test | None = None
    build: Build | None = None
    lookups: bool = True
    #: The pool its proposer draws from (:class:`~airline_gym.taskgen.rotation.Rotation`'s key).
    pool: str = ""


def _res(
    name: str,
    outcome: str,
    weight: float,
    test: Test,
    build: Build,
    lookups: bool = True,
    flown: bool = False,
) -> Bin:
    """A bin about one reservation; its kind is the name's first part. ``flown``: ``test``
    passes reservations with a flown segment, drawn mostly from the trips under way
    (:func:`~airline_gym.taskgen.proposals.flown_proposer`)."""
    pool = name.replace("/", "_")
    propose = flown_proposer(build, pool) if flown else reservation_proposer(test, build, pool)
    changes = outcome == "granted"
    kind = name.split("/")[0]
    return Bin(name, kind, outcome, changes, weight, propose, test, build, lookups, pool)


def _unflown(f: ReservationFacts) -> bool:
    return not f.flown and not f.cancelled


def _changeable(f: ReservationFacts) -> bool:
    return f.cabin != "basic_economy" and _unflown(f)


def _flown(f: ReservationFacts) -> bool:
    return f.flown and not f.cancelled


def _way_back(f: ReservationFacts) -> bool:
    """A trip under way whose way back is still to take (and may be changed)."""
    return f.return_open and f.cabin != "basic_economy"


_PLAN = ("change_of_plan", "other")


def _insured_cancel(f: ReservationFacts) -> bool:
    return f.insured and f.cabin != "business" and not f.recent and _unflown(f)


def _refused_cancel(f: ReservationFacts) -> bool:
    """A cancellation no rule allows: not business, not booked within 24 h, nothing flown or
    cancelled by the airline (so a claim that the airline cancelled it is false)."""
    return f.cabin != "business" and not f.recent and _unflown(f)


def _basic(f: ReservationFacts) -> bool:
    return f.cabin == "basic_economy" and _unflown(f)


BINS: tuple[Bin, ...] = (
    Bin("book", "book", "granted", True, 9, book, pool="book"),
    Bin("book/declined", "book", "declined", False, 1, book_any, pool="book_any"),
    Bin("book/over_budget", "book", "declined", False, 1, over_budget_proposer(book), pool="book"),
    _res("cancel/24h", "granted", 3, lambda f: f.recent and _unflown(f), cancel(_PLAN)),
    _res(
        "cancel/airline",
        "granted",
        2,
        lambda f: bool(f.cancelled) and not f.flown,
        cancel(("airline_cancelled",)),
    ),
    _res(
        "cancel/business",
        "granted",
        3,
        lambda f: f.cabin == "business" and not f.recent and _unflown(f),
        cancel(_PLAN),
    ),
    _res(
        "cancel/insured",
        "granted",
        3,
        lambda f: f.insured and f.cabin != "business" and not f.recent and _unflown(f),
        cancel(("health", "weather")),
    ),
    _res(
        "cancel/refused",
        "refused",
        5,
        _refused_cancel,
        cancel(_PLAN),
    ),
    # fallbacks (if_refused), only in combinations after the request they back up
    _res("cancel/fallback", "granted", 0, _insured_cancel, fallback(cancel(("health", "weather")))),
    _res("cancel/fallback_refused", "refused", 0, _refused_cancel, fallback(cancel(_PLAN))),
    _res("cancel/fallback_unasked", "declined", 0, _unflown, fallback(cancel(_PLAN))),
    _res(  # a transfer is what a bail-out does: kept near the benchmark's share (1 in 50)
        "cancel/flown",
        "transfer",
        2,
        _flown,
        cancel(("change_of_plan", "health")),
        flown=True,
    ),
    _res("change_flights", "granted", 8, _changeable, change_flights),
    _res("change_flights/declined", "declined", 1, _changeable, change_flights_any),
    _res("change_flights/over_budget", "declined", 0.5, _changeable, over_budget(change_flights)),
    _res(
        "change_flights/basic",
        "refused",
        6,
        lambda f: f.cabin == "basic_economy" and _unflown(f),
        change_flights_any,
    ),
    _res("change_flights/route", "refused", 2, _changeable, change_route),
    _res("change_flights/under_way", "granted", 2, _way_back, change_return),
    _res("change_flights/flown", "refused", 1, _way_back, change_outbound),
    _res("change_cabin", "granted", 7, _unflown, change_cabin),
    _res("change_cabin/flown", "refused", 5, _flown, change_cabin, flown=True),
    _res("change_cabin/over_budget", "declined", 1, _unflown, over_budget(change_cabin)),
    _res(
        "change_cabin/business_over_budget",
        "declined",
        0,
        _basic,
        over_budget(cabin_to("business")),
    ),
    _res("change_cabin/fallback_economy", "granted", 0, _basic, fallback(cabin_to("economy"))),
    _res("add_bags", "granted", 5, _unflown, add_bags),
    _res("add_bags/over_budget", "declined", 0.5, _unflown, over_budget(add_bags)),
    _res("edit_passenger", "granted", 4, _unflown, edit_passenger),
    _res("edit_passenger/replace", "granted", 1.5, _unflown, replace_passenger),
    _res("change_count", "refused", 3, _unflown, change_count, lookups=False),
    _res(
        "add_insurance",
        "refused",
        3,
        lambda f: not f.insured and _unflown(f),
        add_insurance,
        lookups=False,
    ),
    _res(
        "compensation/cancelled",
        "granted",
        3,
        lambda f: bool(f.cancelled) and claims.covered(f),
        compensation("cancelled"),
    ),
    _res(  # only after a change of the same reservation (a combination)
        "compensation/delayed",
        "granted",
        0,
        lambda f: bool(f.delayed) and claims.covered(f),
        compensation("delayed"),
    ),
    _res(
        "compensation/refused",
        "refused",
        3,
        lambda f: bool(f.cancelled or f.delayed) and not claims.covered(f),
        compensation(None),
    ),
    Bin("info", "info", "granted", False, 7, info, pool="info"),
    # false claims (taskgen.claims): the policy decides from the DB, whatever the customer says
    _res("cancel/claim", "refused", 3, _refused_cancel, claims.cancel_claim),
    _res(
        "compensation/claim",
        "refused",
        2,
        claims.compensation_claimable,
        claims.compensation_claim,
    ),
    _res("compensation/claim_cancelled", "refused", 1.5, claims.covered, claims.cancelled_claim),
    _res(  # only after a granted cancellation of the same reservation (a combination)
        "compensation/claim_delayed", "refused", 0, claims.covered, claims.delay_claim
    ),
    _res("add_bags/claim", "granted", 1.5, claims.tier_claimable, claims.add_bags_claim),
)

#: Combinations of 2-3 requests of one customer: (bins, on one reservation, weight).
COMBOS: tuple[tuple[tuple[str, ...], bool, float], ...] = (
    (("change_flights", "add_bags"), True, 3),
    (("change_cabin", "add_bags"), True, 2),
    (("change_cabin", "edit_passenger", "add_bags"), True, 2),
    (("edit_passenger", "add_bags"), True, 1),
    (("change_flights", "compensation/delayed"), True, 0.5),
    (("cancel/insured", "compensation/delayed"), True, 1),
    (("cancel/business", "compensation/delayed"), True, 0.5),
    (("cancel/airline", "compensation/cancelled"), True, 2),
    (("cancel/business", "compensation/claim_delayed"), True, 1),
    (("cancel/insured", "compensation/claim_delayed"), True, 1),
    (("add_insurance", "change_count"), True, 1),
    (("add_insurance", "add_bags"), True, 1),
    (("change_count", "edit_passenger"), True, 1),
    (("cancel/refused", "add_insurance"), True, 1),
    (("cancel/24h", "book"), False, 2),
    (("cancel/business", "book"), False, 1),
    (("cancel/refused", "change_cabin"), False, 2),
    (("cancel/insured", "change_flights"), False, 2),
    (("cancel/refused", "info"), False, 1),
    (("change_flights/basic", "info"), False, 1),
    (("info", "cancel/flown"), False, 1),  # the question first: the call ends at a transfer
    (("book", "info"), False, 1),
    *FALLBACK_COMBOS,
)
