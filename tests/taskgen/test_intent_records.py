"""The benchmark's intents as data: the same intents the hand-written code gave, and a bad
record refused in one line naming the record and the field."""

from __future__ import annotations

import hashlib
import json

import pytest

from airline_gym.domain.benchmarks import TAU2, TAU3
from airline_gym.taskgen.benchmark_intents import benchmark_intent, expressed_ids
from airline_gym.taskgen.intent_records import load_intent_records

#: sha256 of every expressed intent's JSON form, τ³ and τ², as the hand-written code
#: (taskgen/bench_tasks_a.py, _b.py, bench_helpers.py) gave them before they became data
#: (fields added since, at their defaults, left out: :data:`ADDED`).
BEFORE_DATA = "ac21942955ff7f8610b7aa945b6b40baa4ee895520978d219bbdc0ff61bdaa82"
#: Request fields added after the records were made, with their defaults.
ADDED = {"replaces": False, "claim": None, "if_refused": False}
#: Persona fields added since, with their defaults.
PERSONA_ADDED = {"chatty": False, "confused": False, "several_at_once": False}


def _as_before(intent: dict) -> dict:
    for name, default in PERSONA_ADDED.items():
        assert intent["persona"].pop(name) == default
    for request in intent["requests"]:
        for name, default in ADDED.items():
            assert request.pop(name) == default
    return intent


def test_the_records_give_the_intents_the_code_gave():
    out = {
        b: {i: _as_before(benchmark_intent(i, b).to_json()) for i in expressed_ids(b)}  # type: ignore[union-attr]
        for b in (TAU3, TAU2)
    }
    assert (len(out[TAU3]), len(out[TAU2])) == (49, 37)
    blob = json.dumps(out, sort_keys=True, separators=(",", ":"))
    assert hashlib.sha256(blob.encode()).hexdigest() == BEFORE_DATA
    assert benchmark_intent("15") == benchmark_intent("16")
    assert benchmark_intent("21").persona.terse and not benchmark_intent("21").persona.patient  # type: ignore[union-attr]


GOOD = {"task": "1", "user_id": "u", "name": "N", "requests": [{"kind": "cancel"}]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"requests": [{"kind": "refund"}]},
            "record 0 (task 1): requests[0]: unknown request kind",
        ),
        ({"requests": [{"kind": "cancel", "reason": "bored"}]}, "requests[0]: unknown cancel"),
        ({"requests": [{"kind": "cancel", "cabni": "x"}]}, "requests[0].cabni: not a field"),
        ({"persona": {"terse": "yes"}}, "persona.terse: expected bool, got str"),
        ({"known": {"dob": 1990}}, "known.dob: expected str, got int"),
        (
            {"requests": [{"kind": "book", "trip": {"origin": "A"}}]},
            "requests[0].trip.destination: missing",
        ),
        (
            {
                "requests": [
                    {
                        "kind": "book",
                        "trip": {
                            "origin": "A",
                            "destination": "B",
                            "outbound": {"date": "d", "pick": "best"},
                        },
                    }
                ]
            },
            "requests[0].trip.outbound.pick: 'best' is not one of cheapest",
        ),
        ({"task": 7}, "record 0 (task 7): task: expected a non-empty string"),
        ({"name": None}, "name: expected str, got NoneType"),
    ],
)
def test_a_bad_record_is_refused_naming_record_and_field(change, message):
    text = json.dumps([{**GOOD, **change}])
    with pytest.raises(ValueError) as caught:
        load_intent_records(text, "f.json")
    assert str(caught.value).startswith("f.json: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_second_record_for_a_task_and_a_file_that_is_not_a_list():
    with pytest.raises(ValueError, match=r"record 1 \(task 1\): task: a second record"):
        load_intent_records(json.dumps([GOOD, GOOD]), "f.json")
    with pytest.raises(ValueError, match=r"f\.json: expected a list of records"):
        load_intent_records("{}", "f.json")
    with pytest.raises(ValueError, match=r"f\.json: not JSON"):
        load_intent_records("[", "f.json")
