"""Corrections that are corrections (one misspelt letter, a wrong date of birth) and someone else
in a passenger's place as a kind of its own, said as such to both customers and read back by
the policy agent; the gold replays under the reference."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from airline_gym.agents.policy.reading import read_requests
from airline_gym.domain.database import load_pristine
from airline_gym.domain.intents import Intent
from airline_gym.taskgen.generate import generate
from airline_gym.taskgen.output import write_tasks
from airline_gym.users.intent_words import say_request

pytestmark = pytest.mark.usefixtures("tau3_for_module")

KINDS = ["edit_passenger", "edit_passenger/replace"]


def _distance(a: str, b: str) -> int:
    """Letters changed (a swap of two neighbours counts 1)."""
    if len(a) != len(b):
        return abs(len(a) - len(b)) + sum(x != y for x, y in zip(a, b, strict=False))
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    swap = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
    return 1 if swap else len(diff)


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return generate(120, 8, kinds=KINDS).records


def test_a_correction_changes_one_letter_or_the_date_of_birth(records) -> None:
    db = load_pristine()
    seen = {"edit_passenger": 0, "edit_passenger/replace": 0}
    for record in records:
        meta = record["airline_gym"]
        for name, request in zip(meta["bins"], meta["intent"]["requests"], strict=True):
            if name not in seen:
                continue
            seen[name] += 1
            old = db.reservations[request["reservation_id"]]["passengers"][
                request["passenger_index"]
            ]
            new = request["new_passenger"]
            changed = [k for k in ("first_name", "last_name", "dob") if old[k] != new[k]]
            if name == "edit_passenger":
                assert not request["replaces"] and len(changed) == 1, (old, new)
                if changed != ["dob"]:
                    assert _distance(old[changed[0]], new[changed[0]]) == 1, (old, new)
            else:  # someone else: another first and last name
                assert request["replaces"] and {"first_name", "last_name"} <= set(changed)
    assert min(seen.values()) >= 10, seen


def test_each_is_said_as_what_it_is_and_read_back(records) -> None:
    kinds = set()
    for record in records:
        intent = Intent.from_json(record["airline_gym"]["intent"])
        instructions = json.dumps(record["user_scenario"]["instructions"])
        edits = [r for r in intent.requests if r.kind == "edit_passenger"]
        assert ("no longer travelling" in instructions) == any(r.replaces for r in edits)
        assert ("booked wrong" in instructions) == any(not r.replaces for r in edits)
        for request in intent.requests:
            if request.kind != "edit_passenger":
                continue
            words = say_request(request, f"my reservation {request.reservation_id}")
            assert ("someone else" in words) == request.replaces
            (read,) = [r for r in read_requests(words) if r.kind == "edit_passenger"]
            assert read == request
            kinds.add(request.replaces)
    assert kinds == {True, False}


@pytest.mark.reference
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("agent", ["gold", "dialogue", "noop"])
def test_the_gold_replays_under_the_reference(records, tmp_path: Path, agent: str) -> None:
    pytest.importorskip("tau2.evaluator.evaluator")
    sys.path.insert(0, str(Path(__file__).parent))
    from test_taskgen_vs_reference import assert_replays, diverse

    path = tmp_path / "tasks.json"
    write_tasks(records, path)
    sample = diverse(records, 3)
    assert {"edit_passenger/replace"} <= {b for r in sample for b in r["airline_gym"]["bins"]}
    assert_replays(path, sample, agent)
