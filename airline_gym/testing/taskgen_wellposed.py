"""Count the ill-posed tasks in a generated set (issue 33, part 3); every count must be 0.

A task is ill-posed when a policy-following agent facing its customer cannot be sure to earn
its reward. Each count is measured from the records alone (the gold actions, the intent) and
the DB, independently of the generator's own checks:

``tie``
    a request's flight rule (book, change flights) ranks another option level with the one
    the gold writes: which flight is meant is unstated;
``itinerary``
    a gold ``book_reservation`` / ``update_reservation_flights`` has a flight that departs
    before the previous one arrives;
``order``
    a request comes after a transfer to a human agent (the call ends at the hand-off);
``payment``
    a booking's payment plan that the customer's words do not state whole (every method, every
    fixed amount);
``route``
    a flight change to another destination whose request does not name that destination.

Run ``python -m airline_gym.testing.taskgen_wellposed --n 10000 --seed 0`` (prints one JSON
object: the counts, the tasks and the seconds), or ``--tasks FILE`` to count a file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any

from airline_gym.domain.database import AirlineDB, PristineDB
from airline_gym.domain.flight_options import itinerary_connects, options, tied
from airline_gym.domain.intents import FlightRule, Intent, Request
from airline_gym.domain.toolbox import execute

__all__ = ["COUNTS", "count", "ill_posed"]

COUNTS: tuple[str, ...] = ("tie", "itinerary", "order", "payment", "route")
_FLIGHT_WRITES = frozenset({"book_reservation", "update_reservation_flights"})


def _rules(db: AirlineDB, request: Request) -> list[tuple[str, str, FlightRule, str, int]]:
    """(origin, destination, rule, cabin, passengers) of each flight choice of ``request``."""
    if request.kind == "book" and request.trip is not None and request.cabin:
        trip, n = request.trip, len(request.passengers)
        out = [(trip.origin, trip.destination, trip.outbound, request.cabin, n)]
        if trip.return_rule is not None:
            out.append((trip.destination, trip.origin, trip.return_rule, request.cabin, n))
        return out
    if request.kind != "change_flights" or not request.reservation_id:
        return []
    record = db.reservation(request.reservation_id)
    if record is None:
        return []
    from airline_gym.taskgen.facts import directions

    parts = directions(record)
    segments = record["flights"]
    cabin = request.cabin or record["cabin"]
    out = []
    for leg in request.legs:
        indexes = parts.get(leg.direction) or []
        if indexes:
            origin = segments[indexes[0]]["origin"]
            destination = segments[indexes[-1]]["destination"]
            out.append((origin, destination, leg.rule, cabin, len(record["passengers"])))
    return out


def _said_problems(request: Request) -> list[str]:
    from airline_gym.users.intent_words import say_request

    problems = []
    if request.kind == "book" and len(request.payment) > 1:
        words = say_request(request) + " " + " ".join(_payment_words(request))
        for part in request.payment:
            if part.payment_id not in words or (
                part.amount is not None and f"${part.amount}" not in words
            ):
                problems.append("payment")
                break
    if request.kind == "change_flights":
        text = say_request(request)
        if any(leg.destination and leg.destination not in text for leg in request.legs):
            problems.append("route")
    return problems


def _payment_words(request: Request) -> list[str]:
    """What the customer answers when asked how it pays."""
    from airline_gym.users.intent_words import detail_answers

    return detail_answers("How would you like to pay?", request)


def ill_posed(record: Mapping[str, Any], base: PristineDB) -> list[str]:
    """The counts (:data:`COUNTS`) one generated task record falls under."""
    extra = record.get("airline_gym") or {}
    intent = Intent.from_json(extra["intent"])
    outcomes = list(extra.get("outcomes") or [])
    found: list[str] = []
    if "transfer" in outcomes[:-1]:
        found.append("order")
    for request in intent.requests:
        found += _said_problems(request)
    db = base.fork()
    writes = [
        a
        for a in record["evaluation_criteria"]["actions"]
        if a["name"] not in ("get_user_details", "get_reservation_details")
        and not a["name"].startswith(("search_", "get_flight", "list_", "calculate"))
    ]
    # the flight choices are judged on the DB as the earlier requests' writes left it
    pending = list(writes)
    for index, request in enumerate(intent.requests):
        choices = _rules(db, request)
        if outcomes[index] in ("granted", "declined") and any(
            tied(options(db, o, d, rule), rule, cabin, n) for o, d, rule, cabin, n in choices
        ):
            found.append("tie")
        mine = _writes_of(request, pending)
        for action in mine:
            if action["name"] in _FLIGHT_WRITES and not itinerary_connects(
                db, action["arguments"].get("flights") or [], _new_flights(db, action)
            ):
                found.append("itinerary")
            execute(db, action["name"], dict(action["arguments"]))
            pending.remove(action)
    return sorted(set(found))


def _new_flights(db: AirlineDB, action: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The (flight number, date) pairs a flights write chooses (a change keeps the rest)."""
    args = action["arguments"]
    chosen = {(str(f.get("flight_number")), str(f.get("date"))) for f in args.get("flights") or []}
    record = db.reservation(str(args.get("reservation_id"))) if "reservation_id" in args else None
    kept = {(s["flight_number"], s["date"]) for s in record["flights"]} if record else set()
    return chosen - kept


def _writes_of(request: Request, pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pending gold writes that carry out ``request`` (as the dialogue gold assigns them)."""
    from airline_gym.domain.tasks import GoldAction
    from airline_gym.users.intent_source import granted_writes

    actions = [GoldAction(str(i), a["name"], dict(a["arguments"])) for i, a in enumerate(pending)]
    granted = {a.action_id for a in granted_writes([request], actions)[0]}
    return [pending[int(i)] for i in sorted(granted, key=int)]


def count(records: Iterable[Mapping[str, Any]], base: PristineDB | None = None) -> dict[str, Any]:
    """Each count over ``records``, and the ids of up to 10 tasks per count."""
    if base is None:
        from airline_gym.domain.database import load_pristine

        base = load_pristine()
    counts = dict.fromkeys(COUNTS, 0)
    examples: dict[str, list[str]] = {name: [] for name in COUNTS}
    tasks = 0
    for record in records:
        tasks += 1
        for name in ill_posed(record, base):
            counts[name] += 1
            if len(examples[name]) < 10:
                examples[name].append(str(record["id"]))
    return {"tasks": tasks, "counts": counts, "examples": examples}


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--n``/``--seed`` to generate (strict), or ``--tasks FILE``."""
    parser = argparse.ArgumentParser(prog="python -m airline_gym.testing.taskgen_wellposed")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grading", choices=("strict", "benchmark"), default="strict")
    parser.add_argument("--tasks", help="count this generated tasks file instead")
    args = parser.parse_args(argv)
    if not 1 <= args.n <= 1_000_000:
        print("taskgen_wellposed: --n must be between 1 and 1000000", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if args.tasks:
        from airline_gym.domain.tasks import load_task_set

        records = [t.raw for t in load_task_set(args.tasks)]
    else:
        from airline_gym.taskgen.generate import generate

        records = generate(args.n, args.seed, grading=args.grading).records
    made = time.perf_counter() - start
    result = count(records)
    result["generate_s"] = round(made, 2)
    result["count_s"] = round(time.perf_counter() - start - made, 2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
