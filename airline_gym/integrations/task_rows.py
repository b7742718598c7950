"""The episodes a training dataset lists, and the benchmark version they belong to.

Every adapter lists the same episodes for the same arguments: one ``(task id, seed)`` per row
(:func:`task_seeds`), from the task set of a benchmark version (``"tau2"``, the default, or
``"tau3"``: its tasks, customer guidelines and failure policy as one unit, see
:mod:`airline_gym.domain.benchmarks`). :func:`dataset_rows` writes them in each trainer's row
format (TRL, SkyRL, verl); each row carries its ``benchmark``, and the env that plays it refuses
a row of another version (:func:`check_row_benchmark`) instead of playing it silently on its own.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, benchmark_tasks, check_benchmark
from airline_gym.domain.prompts import GREETING
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.tool_reply import INSTRUCTIONS
from airline_gym.env.protocols import TOOL_REPLY, get_protocol
from airline_gym.errors import ConfigError

__all__ = [
    "ROW_FORMATS",
    "TRL_INSTRUCTIONS",
    "check_row_benchmark",
    "dataset_rows",
    "env_benchmark",
    "task_seeds",
    "with_benchmark",
]

#: The trainers whose dataset rows :func:`dataset_rows` writes.
ROW_FORMATS = ("trl", "skyrl", "verl")

#: Appended to the agent's system prompt in TRL's rows (the ``tool-reply`` protocol's, ours).
TRL_INSTRUCTIONS = INSTRUCTIONS


def task_seeds(
    split: str = "train",
    task_ids: Sequence[str | int] | None = None,
    repeats: int = 1,
    seed: int = 0,
    tasks: str | os.PathLike[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    benchmark: str = DEFAULT_BENCHMARK,
) -> list[tuple[str, int]]:
    """``(task id, seed)`` pairs: the tasks of ``split`` (or ``task_ids``), ``repeats`` times.

    The tasks are ``benchmark``'s own unless ``tasks`` names a tasks.json. Task ids are
    canonical (``17`` becomes ``"17"``; an unknown id raises). Each pair has its own seed,
    counting from ``seed``.

    >>> task_seeds(task_ids=[17, "3"], repeats=2, seed=5)
    [('17', 5), ('3', 6), ('17', 7), ('3', 8)]
    """
    task_set = load_task_set(benchmark_tasks(tasks, benchmark), data_dir)
    if task_ids is None:
        ids = [t.id for t in task_set.split(split)]
    else:
        ids = [task_set[t].id for t in task_ids]
    rows = [task_id for _ in range(repeats) for task_id in ids]
    return [(task_id, seed + i) for i, task_id in enumerate(rows)]


def _placeholder(task_id: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"(airline task {task_id})"}]


def _row(row_format: str, prompt: list[dict[str, str]] | None, episode: dict[str, Any]) -> Any:
    """One row of ``row_format`` for ``episode`` (its task id, seed and benchmark)."""
    if row_format == "trl":  # TRL passes every column to AirlineToolEnv.reset
        return {"prompt": prompt, **episode}
    common = {"data_source": "airline_gym", "prompt": _placeholder(episode["task_id"])}
    if row_format == "skyrl":
        return {
            **common,
            "env_class": "airline_gym",
            "reward_spec": {"method": "env", "ground_truth": None},
            "extra_info": episode,
        }
    return {
        **common,
        "agent_name": "airline_gym",
        "reward_model": {"style": "env", "ground_truth": ""},
        "extra_info": episode,
    }


def dataset_rows(row_format: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """A trainer's dataset rows, one per :func:`task_seeds` pair, each with its ``benchmark``.

    The other arguments are :func:`task_seeds`'s (``split``, ``task_ids``, ``repeats``, ``seed``,
    ``tasks``, ``data_dir``, ``benchmark``). ``row_format`` is one of :data:`ROW_FORMATS` (each
    adapter's ``dataset_rows`` fixes it):

    - ``"trl"``: ``prompt`` (the ``tool-reply`` protocol's system prompt, the reference's
      system prompt plus :data:`TRL_INSTRUCTIONS`; the agent's greeting; an empty user turn
      that TRL fills with the customer's opening: the env's history at reset), ``task_id``,
      ``seed``, ``benchmark`` (TRL passes them to ``AirlineToolEnv.reset``);
    - ``"skyrl"`` / ``"verl"``: the trainer's row keys (``env_class`` / ``agent_name``
      ``airline_gym``), a placeholder ``prompt`` (the env builds the real one) and
      ``extra_info`` with ``task_id``, ``seed`` and ``benchmark``.

    >>> [row["extra_info"] for row in dataset_rows("verl", task_ids=[17])]
    [{'task_id': '17', 'seed': 0, 'benchmark': 'tau2'}]
    """
    if row_format not in ROW_FORMATS:
        raise ConfigError(f"row_format must be one of {', '.join(ROW_FORMATS)}; got {row_format!r}")
    episodes = inspect.signature(task_seeds).bind(*args, **kwargs)
    episodes.apply_defaults()
    benchmark = check_benchmark(episodes.arguments["benchmark"])
    pairs = task_seeds(**{**episodes.arguments, "benchmark": benchmark})
    prompt = None
    if row_format == "trl":
        system = get_protocol(TOOL_REPLY).system_prompt(episodes.arguments["data_dir"])
        prompt = [
            {"role": "system", "content": system},
            {"role": "assistant", "content": GREETING},
            {"role": "user", "content": ""},
        ]
    return [
        _row(row_format, prompt, {"task_id": task_id, "seed": row_seed, "benchmark": benchmark})
        for task_id, row_seed in pairs
    ]


def check_row_benchmark(row_benchmark: Any, env_benchmark: str) -> None:
    """Refuse a row (or a session's request) of another benchmark version than the env's.

    ``None`` (a row that does not say) plays on the env's version.
    """
    if row_benchmark is None:
        return
    if check_benchmark(row_benchmark) != env_benchmark:
        raise ConfigError(
            f"this episode was listed for benchmark {row_benchmark!r} but the env plays "
            f"{env_benchmark!r}: build the env with benchmark={row_benchmark!r} (or the rows "
            f"with benchmark={env_benchmark!r})"
        )


def env_benchmark(env_kwargs: Mapping[str, Any]) -> str:
    """The benchmark version AirlineEnv(**env_kwargs) plays, checked before any env is built:
    a bad name, or a ``tasks`` name of the other version, is refused in one line."""
    benchmark = check_benchmark(env_kwargs.get("benchmark", DEFAULT_BENCHMARK))
    benchmark_tasks(env_kwargs.get("tasks"), benchmark)
    return benchmark


def with_benchmark(env_kwargs: Mapping[str, Any] | None, benchmark: str | None) -> dict[str, Any]:
    """``env_kwargs`` with ``benchmark`` in it (when given), checked as :func:`env_benchmark`
    checks it; a ``benchmark`` that contradicts ``env_kwargs["benchmark"]`` is refused."""
    kwargs = dict(env_kwargs or {})
    if benchmark is not None:
        given = kwargs.setdefault("benchmark", benchmark)
        if given != benchmark:
            raise ConfigError(f"benchmark {benchmark!r} contradicts env_kwargs' {given!r}")
    env_benchmark(kwargs)
    return kwargs
