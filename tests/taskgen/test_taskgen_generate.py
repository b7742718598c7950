"""generate(): determinism, leak-freedom, distinct tasks, the kinds filter; the CLI's errors.

These tests decide intents with a stand-in that refuses every request after looking it up (the
policy solver has its own tests), so only refusal bins fill; tests/taskgen/
test_taskgen_solved.py runs the real solver.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from airline_gym.cli.main import main
from airline_gym.domain.database import load_pristine
from airline_gym.domain.decisions import Call, Decision, Solution
from airline_gym.domain.intents import Intent
from airline_gym.taskgen.generate import generate, templates
from airline_gym.taskgen.leaks import benchmark_entities

#: Generating leaves out the benchmarks' entities: it reads tau3's task file.
pytestmark = pytest.mark.usefixtures("tau3_for_module")

REFUSALS = ["cancel/refused", "change_count", "add_insurance", "change_flights/basic"]


def refuse_all(db: object, intent: Intent) -> Solution:
    """Every request refused, after reading the user and the reservation it names."""
    decisions = []
    for i, request in enumerate(intent.requests):
        reads = [Call("get_user_details", {"user_id": intent.user_id})]
        if request.reservation_id:
            reads.append(
                Call("get_reservation_details", {"reservation_id": request.reservation_id})
            )
        decisions.append(Decision(i, "refused", "not allowed", reads=tuple(reads)))
    return Solution(tuple(decisions))


def _make(n: int = 60, seed: int = 3, **kwargs: object) -> list[dict]:
    return generate(n, seed, kinds=REFUSALS, solve=refuse_all, **kwargs).records  # type: ignore[arg-type]


def test_same_seed_same_records_other_seed_other_records() -> None:
    first = json.dumps(_make())
    assert json.dumps(_make()) == first
    assert json.dumps(_make(seed=4)) != first
    assert len(json.loads(first)) == 60


def test_no_record_names_a_benchmark_user_or_reservation() -> None:
    db = load_pristine()
    users, reservations = benchmark_entities(db)
    assert len(users) > 20 and len(reservations) > 20  # both task sets were read
    tokens = set(re.findall(r"[A-Za-z0-9_]+", json.dumps(_make(200))))
    assert not tokens & users and not tokens & reservations
    made = generate(5, 0, kinds=REFUSALS, solve=refuse_all)
    assert made.users_available == len(db.users) - len(users)
    allowed = generate(5, 0, kinds=REFUSALS, solve=refuse_all, allow_benchmark_entities=True)
    assert allowed.users_available == len(db.users) and allowed.users_excluded == 0


def test_no_two_tasks_share_user_and_gold_actions() -> None:
    records = _make(300, seed=1)
    # action ids differ per task: compare names and arguments only
    keys = {
        json.dumps(
            [
                r["airline_gym"]["intent"]["user_id"],
                [[a["name"], a["arguments"]] for a in r["evaluation_criteria"]["actions"]],
            ]
        )
        for r in records
    }
    assert len(keys) == len(records)


def test_the_kinds_filter_keeps_only_matching_bins() -> None:
    records = generate(80, 0, kinds=["add_insurance", "cancel"], solve=refuse_all).records
    bins = {tuple(r["airline_gym"]["bins"]) for r in records}
    assert bins == {("cancel/refused",), ("cancel/claim",), ("cancel/refused", "add_insurance")}
    names = {t.name for t in templates(["cancel"])}
    assert "cancel/refused" in names and "cancel/24h" in names and "book" not in names
    with pytest.raises(ValueError, match="unknown kind 'upgrade'"):
        templates(["upgrade"])


def test_strict_grading_leaves_out_refusals_decided_without_a_lookup() -> None:
    """Insurance after booking is refused whatever the DB says: alone, doing nothing would
    pass it under strict grading, so it comes only with a request that needs a lookup."""
    with pytest.raises(ValueError, match="no task can be made"):
        templates(["add_insurance", "change_count"])
    assert {t.name for t in templates(["add_insurance", "change_count"], "benchmark")} == {
        "add_insurance",
        "change_count",
        "add_insurance+change_count",
    }
    records = generate(
        20, 0, kinds=["add_insurance"], solve=refuse_all, grading="benchmark"
    ).records
    assert all(r["evaluation_criteria"]["actions"] == [] for r in records)


def test_a_mix_the_db_cannot_fill_is_an_error_not_a_loop() -> None:
    with pytest.raises(ValueError, match="room for only"):
        generate(5000, 0, kinds=["add_insurance"], solve=refuse_all, grading="benchmark")


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["--n", "0"], "--n must be between 1 and"),
        (["--n", "3", "--kinds", "upgrade"], "unknown kind 'upgrade'"),
        (["--n", "3", "--grading", "lenient"], "invalid choice"),
    ],
)
def test_generate_bad_input_is_one_line_and_exit_2(
    argv: list[str], text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["generate", *argv, "--out", str(tmp_path / "t.json")])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and text in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.json").exists()


def test_generated_tasks_name_their_split(tmp_path: Path) -> None:
    from airline_gym.domain.tasks import load_task_set
    from airline_gym.integrations.task_rows import task_seeds
    from airline_gym.taskgen.output import write_tasks

    records = generate(60, 0, kinds=REFUSALS, solve=refuse_all, test_share=0.3).records
    path = tmp_path / "gen.json"
    write_tasks(records, path)
    task_set = load_task_set(path)
    test = [r["id"] for r in records if r["airline_gym"]["split"] == "test"]
    assert 5 < len(test) < 35  # about 30%, by a hash of the id
    assert list(task_set.splits["test"]) == test
    assert len(task_set.splits["train"]) + len(test) == 60 == len(task_set.splits["base"])
    assert [t for t, _ in task_seeds(split="test", tasks=path)] == test
    with pytest.raises(ValueError, match="test-share"):
        generate(5, 0, solve=refuse_all, test_share=float("nan"))


def test_a_proposal_the_solver_cannot_decide_is_skipped_and_counted() -> None:
    calls = []

    def flaky(db: object, intent: Intent) -> Solution:
        calls.append(intent)
        if len(calls) % 2:
            raise ValueError("cannot decide")
        return refuse_all(db, intent)

    made = generate(10, 0, kinds=REFUSALS, solve=flaky)
    assert len(made.records) == 10
    assert made.rejected["error: ValueError"] >= 10
