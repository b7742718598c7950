"""Pools wide enough: within an entry of the mix no (user, reservations) comes back in the
first 1,000 tasks while the DB offers another, and the generator reports each pool's width."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import pytest

from airline_gym.cli.generate import pool_table
from airline_gym.domain.database import load_pristine
from airline_gym.taskgen.generate import Generated, generate
from airline_gym.taskgen.leaks import benchmark_entities
from airline_gym.taskgen.rotation import TRIES, Rotation

pytestmark = pytest.mark.usefixtures("tau3_for_module")

SEEDS = (90210, 5)


@pytest.fixture(scope="module", params=SEEDS)
def made(request: pytest.FixtureRequest) -> Generated:
    return generate(3000, request.param)


def _first_picks(records: list[dict[str, Any]]) -> dict[str, list[tuple[str, str | None]]]:
    """Entry of the mix -> (user, first reservation) of each of its tasks, in order."""
    out: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    for record in records:
        meta = record["airline_gym"]
        intent = meta["intent"]
        rid = next(
            (r["reservation_id"] for r in intent["requests"] if r.get("reservation_id")), None
        )
        out["+".join(meta["bins"])].append((intent["user_id"], rid))
    return out


def test_no_repeat_within_an_entry_while_the_db_offers_another(made: Generated) -> None:
    """At an entry's first repeat in the first 1,000 tasks, every (user, reservation) that
    entry ever gets in 3,000 tasks has already been used: the DB offered no other."""
    ever = {name: set(picks) for name, picks in _first_picks(made.records).items()}
    first = _first_picks(made.records[:1000])
    checked = 0
    for name, picks in first.items():
        seen: set[tuple[str, str | None]] = set()
        for pick in picks:
            if pick in seen:
                assert ever[name] <= seen, f"{name}: {pick} again, {ever[name] - seen} unused"
                checked += 1
                break
            seen.add(pick)
    assert checked <= 2  # a repeat is rare: only an entry whose pool has one or two that work


def test_the_delayed_compensation_spreads_over_several_reservations(made: Generated) -> None:
    """It used 2 reservations in 11 tasks of 1,000 before; it now has three entries."""
    reservations = {
        pick[1]
        for name, picks in _first_picks(made.records[:1000]).items()
        if "compensation/delayed" in name
        for pick in picks
    }
    assert len(reservations) >= 4


def test_the_report_counts_what_the_records_hold(made: Generated) -> None:
    picks = _first_picks(made.records)
    assert set(made.pools) == set(picks)
    for name, use in made.pools.items():
        assert use.tasks == len(picks[name]) and use.distinct <= use.tasks
        assert use.rounds >= 1 and use.width >= min(use.distinct, 1)
    db = load_pristine()
    users, reservations = benchmark_entities(db)
    airline_cancelled = [  # not flown, a flight the airline cancelled, no excluded entity
        rid
        for rid, res in db.reservations.items()
        if rid not in set(reservations)
        and res["user_id"] not in set(users)
        and _statuses(db, res) & {"cancelled"}
        and not _statuses(db, res) & {"landed", "flying"}
    ]
    assert made.pools["cancel/airline"].width == len(airline_cancelled)
    assert made.pools["book"].width == len(db.users) - len(set(users) & set(db.users))


def _statuses(db: Any, res: dict[str, Any]) -> set[str]:
    return {
        (db.flights[s["flight_number"]]["dates"].get(s["date"]) or {}).get("status", "")
        for s in res["flights"]
    }


def test_the_table_lists_every_entry(made: Generated) -> None:
    lines = pool_table(made.pools).splitlines()
    assert lines[0].startswith("| entry of the mix | pool width |")
    assert len(lines) == 2 + len(made.pools)
    assert any(line.startswith("| cancel/airline | ") for line in lines)


def test_a_failing_id_leaves_its_round_after_its_tries() -> None:
    rotation, rng = Rotation(), random.Random(1)
    for _ in range(TRIES):
        assert rotation.draw(rng, "k", ("bad",)) == "bad"
        rotation.settle(kept=False)
    assert rotation.rounds("", "k") == 1
    rotation.draw(rng, "k", ("bad",))
    assert rotation.rounds("", "k") == 2  # used up: a new round
