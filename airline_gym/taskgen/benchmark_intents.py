"""Structured intents for the benchmark's airline tasks, kept as data.

``benchmark_intents.json`` (shipped beside this module) holds one record per task: our own
encoding of what the task's customer asks for (ids, kinds, rules), read off the task and the DB;
no prose is copied. Where a customer states a condition that the DB settles ("use the
certificate if the price is over 400"), the record holds the branch the DB leads to. Task 46 (a
refund of insurance already bought) has no kind and is not expressed. The records are checked
at import (:func:`~airline_gym.taskgen.intent_records.load_intent_records`): a bad one stops
the import in one line naming the record and the field.

τ² (``benchmark="tau2"``) shares the τ³ intent of every task whose gold leads to the same DB
and the same numbers to say; the 12 tasks τ³ changed in a way that matters to the reward get
none under τ² (:data:`TAU2_DIFFERS`).

>>> benchmark_intent("6").kinds
('add_insurance',)
>>> benchmark_intent("7", "tau2") is None
True
"""

from __future__ import annotations

from importlib.resources import files

from airline_gym.domain.benchmarks import TAU2, TAU3, check_benchmark
from airline_gym.domain.intents import Intent
from airline_gym.taskgen.intent_records import load_intent_records

__all__ = ["RECORDS_FILE", "TAU2_DIFFERS", "benchmark_intent", "expressed_ids"]

#: τ³ task ids whose gold DB or ``communicate_info`` differ from τ²'s (spec §9.4).
TAU2_DIFFERS = frozenset({"2", "7", "9", "14", "23", "27", "29", "33", "35", "37", "38", "44"})

#: The records' file name, beside this module in the package.
RECORDS_FILE = "benchmark_intents.json"

_INTENTS = load_intent_records(
    files("airline_gym.taskgen").joinpath(RECORDS_FILE).read_text(encoding="utf-8"), RECORDS_FILE
)


def expressed_ids(benchmark: str = TAU3) -> tuple[str, ...]:
    """The task ids of ``benchmark`` that have an intent, in numeric order."""
    ids = sorted(_INTENTS, key=int)
    if check_benchmark(benchmark) == TAU2:
        ids = [i for i in ids if i not in TAU2_DIFFERS]
    return tuple(ids)


def benchmark_intent(task_id: str, benchmark: str = TAU3) -> Intent | None:
    """The customer's intent in benchmark task ``task_id``, or None when not expressed."""
    if check_benchmark(benchmark) == TAU2 and str(task_id) in TAU2_DIFFERS:
        return None
    return _INTENTS.get(str(task_id))
