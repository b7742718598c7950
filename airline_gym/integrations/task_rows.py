"""The episodes a training dataset lists: one ``(task id, seed)`` per row, shared by the adapters.

TRL's dataset rows (:func:`airline_gym.integrations.trl.dataset_rows`) and verifiers' tasks
(:class:`airline_gym.integrations.verifiers.AirlineTaskset`) are both built from
:func:`task_seeds`, so the two list the same episodes for the same arguments.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from airline_gym.domain.tasks import DEFAULT_TASK_SET, load_task_set

__all__ = ["task_seeds"]


def task_seeds(
    split: str = "train",
    task_ids: Sequence[str | int] | None = None,
    repeats: int = 1,
    seed: int = 0,
    tasks: str | os.PathLike[str] = DEFAULT_TASK_SET,
    data_dir: str | os.PathLike[str] | None = None,
) -> list[tuple[str, int]]:
    """``(task id, seed)`` pairs: the tasks of ``split`` (or ``task_ids``), ``repeats`` times.

    Task ids are canonical (``17`` becomes ``"17"``; an unknown id raises). Each pair has its
    own seed, counting from ``seed``.

    >>> task_seeds(task_ids=[17, "3"], repeats=2, seed=5)
    [('17', 5), ('3', 6), ('17', 7), ('3', 8)]
    """
    task_set = load_task_set(tasks, data_dir)
    if task_ids is None:
        ids = [t.id for t in task_set.split(split)]
    else:
        ids = [task_set[t].id for t in task_ids]
    rows = [task_id for _ in range(repeats) for task_id in ids]
    return [(task_id, seed + i) for i, task_id in enumerate(rows)]
