"""Generate training tasks: sample intents from the DB, decide them with the policy solver,
keep those whose outcomes fill the wanted mix, and assemble tau2 task records.

Deterministic: the same seed, options and data give the same records (``random.Random`` seeded,
pools in sorted order). Leak-free by default: users and reservations a tau2 or tau3 task names
are left out of the pools.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.domain.decisions import Solution
from airline_gym.domain.intents import Intent, Request
from airline_gym.errors import describe_exception
from airline_gym.taskgen.asks import vary
from airline_gym.taskgen.assemble import (
    GRADINGS,
    assemble,
    changes_db,
    gold_actions,
    sequence_key,
)
from airline_gym.taskgen.bins import BINS, COMBOS, Bin
from airline_gym.taskgen.personas import dress
from airline_gym.taskgen.pools import MIN_CHOICES, Pools, build_pools
from airline_gym.taskgen.stats import payment_sources
from airline_gym.taskgen.traits import task_traits

__all__ = ["COMBOS", "Generated", "PoolUse", "Template", "generate", "templates"]

Solve = Callable[[Any, Intent], Solution]
Write = Callable[[Intent, Solution], Any]

log = logging.getLogger(__name__)

_BY_NAME = {b.name: b for b in BINS}
_TRIES = 40  # proposals per task before another template is drawn
_GIVE_UP = 400  # a template failing this many times in a row leaves the mix


@dataclass(frozen=True)
class Template:
    """One entry of the mix: a single bin, or a combination of bins for one customer."""

    bins: tuple[Bin, ...]
    same_reservation: bool
    weight: float

    @property
    def name(self) -> str:
        """The bins' names joined with ``+``."""
        return "+".join(b.name for b in self.bins)


@dataclass(frozen=True)
class PoolUse:
    """How one template of the mix used its pool: ``width`` candidates (the reservations its
    first bin's test passes, or the users a booking or question draws from), ``tasks`` made,
    ``distinct`` (user, reservations) among them, ``rounds`` of the pool started (above 1: the
    pool was used up, so a repeat was the DB's only choice)."""

    width: int
    tasks: int
    distinct: int
    rounds: int


@dataclass
class Generated:
    """The generated records (none kept when they went to a ``sink``) and what generating them
    met: ``made`` records in all, ``unchanged`` of them leaving the DB as it is."""

    records: list[dict[str, Any]]
    users_available: int
    reservations_available: int
    users_excluded: int
    reservations_excluded: int
    proposals: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    made: int = 0
    unchanged: int = 0
    #: Template name -> how it used its pool (templates that made no task left out).
    pools: dict[str, PoolUse] = field(default_factory=dict)


def templates(kinds: Iterable[str] | None = None, grading: str = "strict") -> list[Template]:
    """The mix: every bin and combination whose bins all match ``kinds`` (a request kind such
    as ``cancel`` or a bin such as ``cancel/refused``; None: all).

    Under ``strict`` grading a template made only of refusals the policy decides without a
    lookup (insurance after booking, a new passenger count) is left out: doing nothing would
    pass it. Such requests still come in combinations with others."""
    wanted = None if kinds is None else {k.strip() for k in kinds if k.strip()}
    if wanted is not None:
        known = {b.kind for b in BINS} | set(_BY_NAME)
        unknown = sorted(wanted - known)
        if unknown:
            raise ValueError(f"unknown kind {unknown[0]!r} (kinds: {', '.join(sorted(known))})")

    def fits(b: Bin) -> bool:
        return wanted is None or b.kind in wanted or b.name in wanted

    def checkable(bins: tuple[Bin, ...]) -> bool:
        return grading != "strict" or any(b.lookups for b in bins)

    out = [
        Template((b,), False, b.weight)
        for b in BINS
        if b.weight > 0 and fits(b) and checkable((b,))
    ]
    for names, same, weight in COMBOS:
        bins = tuple(_BY_NAME[n] for n in names)
        if all(fits(b) for b in bins) and checkable(bins):
            out.append(Template(bins, same, weight))
    if not out and wanted is not None:  # e.g. only compensation/delayed: its combinations
        raise ValueError(f"no task can be made of only {', '.join(sorted(wanted))}")
    return out


def _shared(pools: Pools, template: Template) -> tuple[str, ...]:
    """The reservations every bin of a one-reservation combination fits."""
    tests = [b.test for b in template.bins]
    return pools.select(template.name, lambda f: all(t(f) for t in tests if t is not None))


def _propose(
    rng: random.Random, pools: Pools, template: Template
) -> tuple[str, list[Request]] | None:
    pools.rotation.scope = template.name
    if template.same_reservation:
        rid = pools.rotation.draw(rng, template.name, _shared(pools, template))
        if rid is None:
            return None
        facts = pools.reservations[rid]
        requests = []
        for b in template.bins:
            assert b.build is not None
            request = b.build(rng, pools, facts)
            if request is None:
                return None
            requests.append(request)
        return facts.user_id, requests
    user: str | None = None
    taken: frozenset[str] = frozenset()
    requests = []
    for b in template.bins:
        found = b.propose(rng, pools, user, taken)
        if found is None:
            return None
        user, request = found
        requests.append(request)
        if request.reservation_id:
            taken = taken | {request.reservation_id}
    assert user is not None
    return user, requests


def _pool(pools: Pools, template: Template) -> tuple[str, int]:
    """The rotation key ``template`` draws its first pick from, and that pool's width."""
    if template.same_reservation:
        return template.name, len(_shared(pools, template))
    first = template.bins[0]
    if first.test is not None:  # its own cache key: a flown bin draws from two pools
        return first.pool, len(pools.select(f"width:{first.pool}", first.test))
    return first.pool, len(pools.users)


def _pool_use(pools: Pools, mix: Sequence[Template], records: Sequence[Any]) -> dict[str, PoolUse]:
    """Each template's :class:`PoolUse` over ``records``."""
    made: dict[str, list[tuple[Any, ...]]] = {}
    for record in records:
        meta = record["airline_gym"]
        intent = meta["intent"]
        ids = tuple(r.get("reservation_id") for r in intent["requests"])
        made.setdefault("+".join(meta["bins"]), []).append((intent["user_id"], ids))
    out = {}
    for template in mix:
        pairs = made.get(template.name)
        if pairs:
            key, width = _pool(pools, template)
            out[template.name] = PoolUse(
                width, len(pairs), len(set(pairs)), pools.rotation.rounds(template.name, key)
            )
    return out


def _intent(pools: Pools, user_id: str, requests: Sequence[Request]) -> Intent:
    record = pools.user(user_id)
    name = f"{record['name']['first_name']} {record['name']['last_name']}"
    known = {"user_id": user_id, "name": name}
    reservations = [r.reservation_id for r in requests if r.reservation_id]
    if reservations:
        known["reservation_ids"] = ", ".join(dict.fromkeys(reservations))
    return dress(Intent(user_id=user_id, name=name, requests=tuple(requests), known=known))


def _profile(pools: Pools, intent: Intent, record: dict[str, Any]) -> dict[str, Any]:
    """Tier, cabin, passengers, payment methods and traits, for the distribution tables."""
    cabin: str | None = None
    passengers = 0
    for request in intent.requests:  # the first request about a reservation or a booking
        if request.reservation_id:
            res = pools.db.reservations[request.reservation_id]
            cabin, passengers = res["cabin"], len(res["passengers"])
            break
        if request.kind == "book":
            cabin, passengers = request.cabin, len(request.passengers)
            break
    return {
        "tier": pools.user(intent.user_id)["membership"],
        "cabin": cabin or "-",
        "passengers": passengers or "-",
        "payment_methods": payment_sources(record["evaluation_criteria"]["actions"]),
        "traits": task_traits(intent, pools.db.fork()),
    }


def _fits(template: Template, solution: Solution, grading: str) -> str:
    """'' when the decisions have the outcomes the template aims at, else why not."""
    if len(solution.decisions) != len(template.bins):
        return "decision count"
    for b, d in zip(template.bins, solution.decisions, strict=True):
        if d.outcome != b.outcome or changes_db(d) != b.changes_db:
            return f"{b.name}: {d.outcome}"
        if "0" in d.say:
            return f"{b.name}: says 0"  # too easy to say by chance
    if grading == "strict" and not (solution.reads or solution.say or solution.writes):
        return "nothing to check"  # doing nothing would pass it
    if solution.ill_posed:
        return f"ill-posed: {solution.ill_posed[0]}"  # a tie, flights that do not connect
    for d in solution.decisions:
        if d.outcome == "granted" and d.choices and min(d.choices) < MIN_CHOICES:
            return "few choices"  # proposing the search hits in order would find the flight
    if "transfer" in [d.outcome for d in solution.decisions][:-1]:
        return "ill-posed: a request after the hand-off"  # the call ends at the transfer
    return ""


def _split(task_id: str, test_share: float) -> str:
    """``test`` for about ``test_share`` of the ids (a stable hash), else ``train``."""
    digest = hashlib.sha256(task_id.encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") < test_share * 2**64 else "train"


def _default_solve() -> Solve:
    from airline_gym.taskgen import solver

    return solver.solve


def _default_writer() -> Write:
    from airline_gym.taskgen import instructions

    return instructions.write_instructions


def generate(
    n: int,
    seed: int,
    kinds: Iterable[str] | None = None,
    grading: str = "strict",
    allow_benchmark_entities: bool = False,
    db: PristineDB | None = None,
    solve: Solve | None = None,
    write_instructions: Write | None = None,
    exclude: tuple[Iterable[str], Iterable[str]] | None = None,
    test_share: float = 0.0,
    sink: Callable[[dict[str, Any]], None] | None = None,
) -> Generated:
    """``n`` task records (ids ``g<seed>_<i>``); ``ValueError`` for bad options or a mix the
    DB cannot fill with ``n`` distinct tasks.

    ``sink``: called with each record as it is made, in order, instead of keeping it in
    ``records`` (memory then stays flat in ``n``).

    ``exclude``: (user ids, reservation ids) to leave out; default: the benchmarks' entities
    unless ``allow_benchmark_entities``. ``test_share``: about this share of the tasks go to
    split ``test`` (by a hash of the task id), the rest to ``train``.
    """
    if not 0.0 <= test_share <= 1.0:
        raise ValueError(f"--test-share must be between 0 and 1, not {test_share}")
    if n < 0 or n > 1_000_000:
        raise ValueError(f"--n must be between 0 and 1000000, not {n}")
    if grading not in GRADINGS:
        raise ValueError(f"unknown grading {grading!r} (one of {', '.join(GRADINGS)})")
    mix = templates(kinds, grading)
    if db is None:
        from airline_gym.domain.database import load_pristine

        db = load_pristine()
    decide: Solve = solve or _default_solve()
    write: Write = write_instructions or _default_writer()
    if exclude is None and not allow_benchmark_entities:
        from airline_gym.taskgen.leaks import benchmark_entities

        exclude = benchmark_entities(db)
    users, reservations = exclude or ((), ())
    pools = build_pools(db, users, reservations)
    out = Generated(
        records=[],
        users_available=len(pools.users),
        reservations_available=len(pools.reservations),
        users_excluded=pools.excluded_users,
        reservations_excluded=pools.excluded_reservations,
    )
    rng = random.Random(seed)
    seen: set[bytes] = set()  # digests of the records' keys: 16 bytes a task, whatever its size
    failures = {t.name: 0 for t in mix}
    while out.made < n:
        active = [t for t in mix if failures[t.name] < _GIVE_UP]
        if not active:
            raise ValueError(
                f"the DB has room for only {out.made} distinct tasks of this mix (asked for {n})"
            )
        template = rng.choices(active, weights=[t.weight for t in active])[0]
        for _ in range(_TRIES):
            out.proposals += 1
            proposal = _propose(rng, pools, template)
            if proposal is None:
                why = "no fitting reservation"
            else:
                intent = vary(rng, pools.db, _intent(pools, *proposal))
                try:
                    solution = decide(db.fork(), intent)
                    why = _fits(template, solution, grading)
                    instructions = write(intent, solution) if not why else {}
                except Exception as exc:  # a proposal no lane can handle is skipped, counted
                    why = f"error: {type(exc).__name__}"
                    if why not in out.rejected:
                        log.warning("generate: %s on %s", describe_exception(exc), intent)
            if not why:
                task_id = f"g{seed}_{out.made}"
                actions, _ = gold_actions(task_id, solution, grading)
                key = sequence_key(
                    [
                        intent.user_id,
                        [[a["name"], a["arguments"]] for a in actions],
                        list(solution.say),
                    ]
                )
                digest = hashlib.sha256(key.encode()).digest()[:16]
                why = "duplicate" if digest in seen else ""
            pools.rotation.settle(kept=not why)
            if not why:
                record = assemble(
                    task_id,
                    intent,
                    solution,
                    instructions,
                    grading,
                    {
                        "bins": [b.name for b in template.bins],
                        "seed": seed,
                        "split": _split(task_id, test_share),
                    },
                )
                record["airline_gym"].update(_profile(pools, intent, record))
                seen.add(digest)
                out.made += 1
                out.unchanged += not record["airline_gym"]["changes_db"]
                if sink is None:
                    out.records.append(record)
                else:
                    sink(record)
                failures[template.name] = 0
                break
            cause = why if why.startswith("error") else why.split(":")[0]
            out.rejected[cause] = out.rejected.get(cause, 0) + 1
            failures[template.name] += 1
    out.pools = _pool_use(pools, mix, out.records)
    return out
