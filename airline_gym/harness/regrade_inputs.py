"""What ``regrade`` reads: a results file (checked), a task id fix file, the tasks to grade
against and the pristine database; each unreadable input is a one-line error naming it."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.data.limits import TASK_ID_MAP_MAX_BYTES
from airline_gym.domain.benchmarks import benchmark_tasks
from airline_gym.domain.database import PristineDB, load_pristine
from airline_gym.domain.tasks import Task, load_task_set, parse_tasks
from airline_gym.errors import ConfigError, DataError
from airline_gym.harness.results import Results, read_json
from airline_gym.harness.results.io import check_task

__all__ = ["load_checked", "load_results", "load_task_id_map", "pristine_db", "task_table"]

JSONObject = dict[str, Any]


def load_results(
    path: str | os.PathLike[str],
) -> tuple[list[JSONObject] | None, Sequence[JSONObject]]:
    """(embedded tasks or ``None``, simulations) of a results file or a bare list of simulations."""
    results = load_checked(path)
    return results.tasks or None, results.simulations


def load_checked(path: str | os.PathLike[str]) -> Results:
    results = Results.load(path, need_messages=True)
    for i, raw in enumerate(results.tasks):
        check_task(raw, f"{path}: task {i}")
    return results


def load_task_id_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """Simulation id -> real task id, from a flat JSON object or a ``by_simulation_id`` fix file.

    The fix file maps each id to ``{"recovered_task_id": ...}`` (or ``{"task_id": ...}``).
    """
    data = read_json(path, TASK_ID_MAP_MAX_BYTES, "task id map")
    if isinstance(data, dict) and isinstance(data.get("by_simulation_id"), dict):
        data = data["by_simulation_id"]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object mapping simulation id to task id")
    out: dict[str, str] = {}
    for sim_id, value in data.items():
        if isinstance(value, Mapping):
            value = value.get("recovered_task_id", value.get("task_id"))
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ConfigError(f"{path}: no task id for simulation {sim_id!r}")
        out[str(sim_id)] = str(value)
    return out


def task_table(
    path: str | os.PathLike[str], embedded: list[JSONObject] | None, tasks: Any, benchmark: str
) -> tuple[Mapping[str, Task], str]:
    """(tasks by id, where they come from): the embedded tasks, else ``tasks``, else the
    benchmark's."""
    if embedded is not None:
        return parse_tasks(embedded), f"the tasks embedded in {path}"
    name = benchmark_tasks(tasks, benchmark)
    try:
        task_set = load_task_set(name)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{name}: not valid JSON ({exc})") from None
    except (OSError, ValueError) as exc:
        text = str(exc)
        raise ConfigError(text if str(name) in text else f"{name}: {text}") from None
    except (TypeError, KeyError, AttributeError, RecursionError) as exc:
        raise ConfigError(f"{name}: not a tasks file ({type(exc).__name__}: {exc})") from None
    for i, task in enumerate(task_set):
        check_task(task.raw, f"{name}: task {i}")
    return task_set.tasks, f"task set {task_set.name!r}"


def pristine_db() -> PristineDB:
    """The configured pristine DB; an unreadable db.json is a one-line error naming it."""
    try:
        return load_pristine()
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        from airline_gym.data import data_files

        raise DataError(f"{data_files().db}: not a readable airline DB ({exc})") from None
