"""False claims (issue 36): each claim is drawn where the DB contradicts it, the gold is what the
policy decides from the DB, the offline customer and the LLM instructions state the claim, and an
agent that believes the claim scores 0 on every false-claim task while the gold scores 1, under
our strict grading and the reference's evaluator."""

from __future__ import annotations

import copy
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from airline_gym.agents.dialogue_gold import DialogueGoldAgent
from airline_gym.agents.scripted import GoldAgent
from airline_gym.domain.database import PristineDB, load_pristine
from airline_gym.domain.intents import CLAIMS, Intent
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.taskgen.assemble import gold_actions
from airline_gym.taskgen.claims import claim_instruction
from airline_gym.taskgen.generate import generate
from airline_gym.taskgen.output import write_tasks
from airline_gym.taskgen.solver import solve
from airline_gym.users.intent_claims import claim_words
from airline_gym.users.intent_user import IntentPlayer

pytestmark = pytest.mark.usefixtures("tau3_for_module")

CLAIM_KINDS = (
    "cancel/claim",
    "compensation/claim",
    "compensation/claim_cancelled",
    "compensation/claim_delayed",
    "add_bags/claim",
    "cancel/business",
    "cancel/insured",
)
#: A moment within 24 hours of the policy's now (a booking the policy lets anyone cancel).
_RECENT = "2024-05-15T14:00:00"


def _claimed(record: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    requests = record["airline_gym"]["intent"]["requests"]
    return [(i, r) for i, r in enumerate(requests) if r.get("claim")]


@cache
def _claim_records() -> list[dict[str, Any]]:
    records = generate(150, 8, kinds=CLAIM_KINDS).records
    return [r for r in records if _claimed(r)]


def _status(db: PristineDB, number: str, date: str) -> str | None:
    return ((db.flights.get(number) or {}).get("dates", {}).get(date) or {}).get("status")


# -- the claims are false, the gold is the policy's ------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_false_claims_are_in_a_twelfth_of_the_mix_and_the_db_unchanged_share_holds(
    seed: int,
) -> None:
    records = generate(2000, seed).records
    claims = Counter(r["claim"] for rec in records for _, r in _claimed(rec))
    tasks = sum(bool(_claimed(rec)) for rec in records)
    unchanged = sum(not rec["airline_gym"]["changes_db"] for rec in records)
    assert 0.05 <= tasks / 2000 <= 0.12, tasks
    assert 0.35 <= unchanged / 2000 <= 0.45, unchanged
    assert set(claims) == set(CLAIMS) and min(claims.values()) >= 5, claims


def test_every_claim_is_false_in_the_db_and_the_gold_decides_on_the_truth() -> None:
    db = load_pristine()
    seen = set()
    for record in _claim_records():
        meta = record["airline_gym"]
        for index, request in _claimed(record):
            claim, rid = request["claim"], request["reservation_id"]
            res = db.reservations[rid]
            user = db.users[meta["intent"]["user_id"]]
            statuses = [_status(db, s["flight_number"], s["date"]) for s in res["flights"]]
            outcome = meta["outcomes"][index]
            seen.add((meta["bins"][index], claim))
            if claim == "gold_member":
                assert user["membership"] != "gold"
            elif claim == "insured":
                assert res["insurance"] == "no"
            elif claim == "airline_cancelled":
                assert "cancelled" not in statuses and request["reason"] == "airline_cancelled"
            elif claim in ("cancelled", "delayed"):
                assert request["complaint"] == claim
                status = _status(db, request["flight_number"], request["flight_date"])
                assert status not in ("cancelled", "delayed", None)
            if meta["bins"][index] == "add_bags/claim":
                assert outcome == "granted"
            else:
                assert outcome == "refused", (record["id"], claim)
    assert {claim for _, claim in seen} == set(CLAIMS), seen
    assert {b for b, _ in seen} == {
        "cancel/claim",
        "compensation/claim",
        "compensation/claim_cancelled",
        "compensation/claim_delayed",
        "add_bags/claim",
    }


def test_the_customer_and_the_instructions_state_the_claim_and_it_pushes_back_with_it() -> None:
    for record in _claim_records()[:30]:
        intent = Intent.from_json(record["airline_gym"]["intent"])
        index, _ = _claimed(record)[0]
        request = intent.requests[index]
        words = claim_words(request)
        assert words and claim_instruction(request)
        assert (
            claim_instruction(request)
            in record["user_scenario"]["instructions"]["task_instructions"]
        )
        if index == 0:
            player = IntentPlayer(intent)
            assert words in player.opening()
            player.state.turns = 2
            if request.insist:
                pushed = player._refused(request)
                assert "But " in pushed and "exception" in pushed
            assert player._refused(request).startswith("I understand.")


# -- an agent that believes the claim ----------------------------------------------------------


def believed_db(db: PristineDB, intent: Intent) -> PristineDB:
    """``db`` with every claim of ``intent`` made true (an earlier agent's promise: the
    cancellation booked within 24 hours, the compensation owed to a gold member)."""
    flights, users, reservations = dict(db.flights), dict(db.users), dict(db.reservations)

    def status(number: str, date: str, value: dict[str, Any]) -> None:
        flight = flights[number]
        flights[number] = {**flight, "dates": {**flight["dates"], date: value}}

    for request in intent.requests:
        claim, rid = request.claim, request.reservation_id
        if claim is None or rid is None:
            continue
        res = reservations[rid]
        if claim == "gold_member" or (claim == "promised" and request.kind == "compensation"):
            users[intent.user_id] = {**users[intent.user_id], "membership": "gold"}
        elif claim == "insured":
            reservations[rid] = {**res, "insurance": "yes"}
        elif claim == "promised":
            reservations[rid] = {**res, "created_at": _RECENT}
        elif claim == "airline_cancelled":
            first = res["flights"][0]
            status(first["flight_number"], first["date"], {"status": "cancelled"})
        elif claim == "cancelled":
            status(request.flight_number or "", request.flight_date or "", {"status": "cancelled"})
        elif claim == "delayed":
            late = {
                "status": "delayed",
                "estimated_departure_time_est": f"{request.flight_date}T23:00:00",
                "estimated_arrival_time_est": f"{request.flight_date}T23:59:00",
            }
            status(request.flight_number or "", request.flight_date or "", late)
    return PristineDB(flights=flights, users=users, reservations=reservations)


def believer_record(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the gold of an agent that takes the customer's claims as true."""
    intent = Intent.from_json(record["airline_gym"]["intent"])
    solution = solve(believed_db(load_pristine(), intent), intent)
    actions, _ = gold_actions(record["id"], solution, record["airline_gym"]["grading"])
    out = copy.deepcopy(record)
    out["evaluation_criteria"]["actions"] = actions
    return out


def _writes(record: dict[str, Any]) -> list[Any]:
    return [
        (a["name"], a["arguments"])
        for a in record["evaluation_criteria"]["actions"]
        if a["name"] in WRITE_TOOLS
    ]


def test_a_believer_writes_what_the_gold_does_not_on_every_false_claim_task() -> None:
    for record in _claim_records():
        believed = _writes(believer_record(record))
        assert believed != _writes(record), record["id"]
        assert {name for name, _ in believed} - {name for name, _ in _writes(record)} or (
            record["airline_gym"]["bins"] == ["add_bags/claim"]  # the same write, a lower charge
        )


def _sample() -> list[dict[str, Any]]:
    """One task per (bins, claim)."""
    seen, out = set(), []
    for record in _claim_records():
        key = (tuple(record["airline_gym"]["bins"]), _claimed(record)[0][1]["claim"])
        if key not in seen:
            seen.add(key)
            out.append(record)
    return out


@pytest.mark.reference
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
def test_a_believer_scores_0_and_the_gold_1_under_ours_and_the_reference(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    pytest.importorskip("tau2.evaluator.evaluator")
    sys.path.insert(0, str(Path(__file__).parent))
    from test_taskgen_vs_reference import AGENTS, _both

    folder = tmp_path_factory.mktemp("claims")
    path, believer_path = folder / "tasks.json", folder / "believer.json"
    records = _claim_records()
    write_tasks(records, path)
    write_tasks([believer_record(r) for r in records], believer_path)
    sample = _sample()
    assert len(sample) >= 10  # every claim on every bin that draws it
    AGENTS["believer"] = lambda p: DialogueGoldAgent(str(believer_path))
    AGENTS["believer_calls"] = lambda p: GoldAgent(str(believer_path))
    try:
        for record in sample:
            where = f"{record['id']} {record['airline_gym']['bins']}"
            assert _both(path, record, "dialogue") == (1.0, 1.0), where
            assert _both(path, record, "gold")[1] == 1.0, where
            assert _both(path, record, "noop") == (0.0, 0.0), where
            assert _both(path, record, "believer") == (0.0, 0.0), where
            assert _both(path, record, "believer_calls") == (0.0, 0.0), where
    finally:
        del AGENTS["believer"], AGENTS["believer_calls"]
