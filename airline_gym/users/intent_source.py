"""Where the scripted customer's intent comes from, and which gold writes carry out each request.

:func:`task_intent` reads a task's intent: a generated task carries it (``task["airline_gym"]
["intent"]``); a benchmark task whose request the solver lane wrote as one gets that intent (of
its own benchmark, and only when the task's user is the intent's). :func:`granted_writes` assigns
the task's gold writes to the intent's requests, so that the gold dialogue knows where to confirm
and where to refuse. The customer never calls it: it reads no gold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK
from airline_gym.domain.intents import Intent, Request
from airline_gym.domain.tasks import GoldAction, Task
from airline_gym.errors import ConfigError
from airline_gym.taskgen.benchmark_intents import benchmark_intent

__all__ = ["carries_intent", "granted_writes", "task_intent"]

#: The write tools that grant each kind of request.
_WRITES: dict[str, tuple[str, ...]] = {
    "book": ("book_reservation",),
    "cancel": ("cancel_reservation",),
    "change_flights": ("update_reservation_flights",),
    "change_cabin": ("update_reservation_flights",),
    "add_bags": ("update_reservation_baggages",),
    "edit_passenger": ("update_reservation_passengers",),
    "compensation": ("send_certificate",),
}


def carries_intent(task: Task) -> bool:
    """Whether ``task`` itself carries an intent (a generated task)."""
    extra = task.raw.get("airline_gym")
    return isinstance(extra, Mapping) and extra.get("intent") is not None


def task_intent(task: Task, benchmark: str | None = None) -> Intent | None:
    """The intent ``task`` carries (``task["airline_gym"]["intent"]``), else the one written for
    the benchmark task of that id when its user is the task's, else None."""
    extra = task.raw.get("airline_gym")
    data = extra.get("intent") if isinstance(extra, Mapping) else None
    if data is not None:
        try:
            return Intent.from_json(data)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"task {task.id}: bad airline_gym.intent: {exc}") from None
    # written for a benchmark task: it applies only where the task is that task (same user)
    intent = benchmark_intent(task.id, benchmark or DEFAULT_BENCHMARK)
    known = str(task.instructions.get("known_info") or "")
    return intent if intent is not None and intent.user_id in known else None


def _grants(request: Request, action: GoldAction) -> bool:
    """Whether the write ``action`` could carry out ``request``."""
    args = action.arguments
    if action.name not in _WRITES.get(request.kind, ()):
        return False
    if request.kind == "book":
        trip = request.trip
        if trip is not None and (args.get("origin"), args.get("destination")) != (
            trip.origin,
            trip.destination,
        ):
            return False
        # several bookings on one route: told apart by their travellers and payment
        people = [(p.get("first_name"), p.get("last_name")) for p in args.get("passengers") or []]
        if request.passengers and people != [
            (p.first_name, p.last_name) for p in request.passengers
        ]:
            return False
        paid = {m.get("payment_id") for m in args.get("payment_methods") or []}
        return not request.payment or paid <= {p.payment_id for p in request.payment}
    if request.kind == "compensation":
        return True
    if args.get("reservation_id") != request.reservation_id:
        return False
    # a cabin change and a flight change both write update_reservation_flights
    return request.cabin is None or args.get("cabin") == request.cabin


def granted_writes(
    requests: Sequence[Request], actions: Sequence[GoldAction]
) -> list[tuple[GoldAction, ...]]:
    """The gold write that carries out each request (none when the policy refuses it): each
    request takes the first write not taken yet that could carry it out (a cabin change and a
    flight change of one reservation each take one ``update_reservation_flights``)."""
    taken: set[int] = set()
    out: list[tuple[GoldAction, ...]] = []
    for request in requests:
        mine = next(
            (i for i, a in enumerate(actions) if i not in taken and _grants(request, a)), None
        )
        taken.update(() if mine is None else (mine,))
        out.append(() if mine is None else (actions[mine],))
    return out
