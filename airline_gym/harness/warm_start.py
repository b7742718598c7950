"""Warm-start data: the gold agent's conversations with the scripted customer, as SFT rows.

:func:`warm_start` plays a built-in gold agent (``gold-dialogue`` by default: the gold calls in
a dialogue that asks for a yes before each write and refuses what the policy refuses) against
the offline scripted customer on every selected task (tasks with an intent get the customer that
plays it), keeps the episodes that score at least ``min_reward``, and writes them as
:func:`~airline_gym.harness.export.write_jsonl` does: one JSON line per conversation with
``messages`` (system prompt first; assistant ``tool_calls`` with JSON-object arguments; ``tool``
results with ``tool_call_id``) and ``tools`` (the schemas the agent was offered), which
``datasets.load_dataset("json", ...)`` loads and TRL's ``SFTTrainer`` takes as a conversational
dataset with tools.

Rows are written in task order as the episodes end, to an
:class:`~airline_gym.data.output.OutputFile` that replaces ``out`` once the file is whole (so
memory stays flat in the number of tasks, and ``out`` is never one of the inputs, a device or
written by two runs at once). Ctrl-C stops as ``eval`` does: no episode starts, those in flight
get a grace period, and :class:`WarmStartInterrupted` is raised with ``out`` left as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.agents.registry import builtin_agent
from airline_gym.data.output import OutputFile, data_inputs
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, benchmark_tasks
from airline_gym.domain.tasks import Task, load_task_set
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import EvalConfig, select_task_ids
from airline_gym.harness.export import episode_record
from airline_gym.harness.interrupt import StopOnInterrupt
from airline_gym.harness.play_jobs import play_jobs
from airline_gym.harness.results.io import encode
from airline_gym.harness.runner import EpisodeResult, arun_episode
from airline_gym.users.intent_source import task_intent

__all__ = [
    "WARM_START_AGENTS",
    "WarmStart",
    "WarmStartInterrupted",
    "drop_reason",
    "warm_start",
]

#: The agents whose conversations make warm-start data.
WARM_START_AGENTS: tuple[str, ...] = ("gold-dialogue", "gold")

#: ``progress(done, total)`` after each episode.
Progress = Callable[[int, int], None]


@dataclass
class WarmStart:
    """What :func:`warm_start` did: episodes played, rows written, tasks left out (below
    ``min_reward``, with their reward and why), and tasks not played because the agent would
    show nothing there (no intent, no write and nothing to say: the dialogue would ignore the
    request)."""

    played: int
    written: int
    dropped: dict[str, float] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    #: Why each dropped task scored below ``min_reward`` (its ending, or the failed checks).
    why: dict[str, str] = field(default_factory=dict)


class WarmStartInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`warm_start` after ``played`` of ``total`` episodes; nothing was
    written (``out`` is as it was)."""

    def __init__(self, played: int, total: int) -> None:
        self.played, self.total = played, total
        super().__init__(
            f"interrupted after {played} of {total} episodes: nothing written (out left as it was)"
        )


class _Rows:
    """Finished episodes into ``out`` in task order, as soon as every earlier one is in."""

    def __init__(self, out: OutputFile, min_reward: float, total: int, progress: Progress | None):
        self.out, self.min_reward, self.total, self.progress = out, min_reward, total, progress
        self.waiting: dict[int, EpisodeResult] = {}
        self.next = self.played = self.written = 0
        self.dropped: dict[str, float] = {}
        self.why: dict[str, str] = {}

    def ended(self, done: tuple[int, EpisodeResult]) -> None:
        index, result = done
        self.played += 1
        self.waiting[index] = result
        while self.next in self.waiting:
            self._write(self.waiting.pop(self.next))
            self.next += 1
        if self.progress is not None:
            self.progress(self.played, self.total)

    def _write(self, result: EpisodeResult) -> None:
        if result.reward >= self.min_reward:
            self.out.write(encode(episode_record(result)) + "\n")
            self.written += 1
        else:
            self.dropped[str(result.task_id)] = result.reward
            self.why[str(result.task_id)] = drop_reason(result)


def _inputs(tasks: str | os.PathLike[str], data_dir: Any) -> list[Path]:
    """The files warm-start reads: the tasks file (and its splits), the data."""
    found = data_inputs(data_dir)
    path = Path(tasks).expanduser()
    if path.is_file():
        found += [path, path.with_name("split_tasks.json")]
    return found


def warm_start(
    out: str | os.PathLike[str],
    *,
    tasks: str | os.PathLike[str] | None = None,
    benchmark: str = DEFAULT_BENCHMARK,
    split: str = "base",
    task_ids: list[str] | None = None,
    agent: str = "gold-dialogue",
    protocol: str = "leaderboard",
    min_reward: float = 1.0,
    concurrency: int = 4,
    data_dir: Any = None,
    progress: Progress | None = None,
) -> WarmStart:
    """Play ``agent`` with the scripted customer on the selected tasks and write the episodes
    scoring at least ``min_reward`` to ``out`` (JSON Lines; see the module docstring); when
    none does, ``out`` is left as it was. ``progress(done, total)`` is called as each ends."""
    if agent not in WARM_START_AGENTS:
        raise ConfigError(f"agent must be one of {', '.join(WARM_START_AGENTS)}: {agent!r}")
    if not 0.0 <= min_reward <= 1.0:  # also refuses NaN
        raise ConfigError(f"min-reward must be between 0 and 1: {min_reward!r}")
    config = EvalConfig(
        tasks=tasks,
        split=split,
        task_ids=task_ids,
        user="scripted",
        protocol=protocol,
        benchmark=benchmark,
        concurrency=concurrency,
        data_dir=data_dir,
    )
    config.validate()
    source = benchmark_tasks(tasks, benchmark)
    task_set = load_task_set(source, data_dir)
    selected = select_task_ids(task_set, config)
    skipped = [t for t in selected if _thin(task_set[t], benchmark)]
    ids = [t for t in selected if t not in skipped]

    async def play(env: Any, job: tuple[int, str]) -> tuple[int, EpisodeResult]:
        index, task_id = job
        return index, await arun_episode(env, builtin_agent(agent, task_set), task_id, 0)

    with OutputFile(out, inputs=_inputs(source, data_dir)) as file:
        rows = _Rows(file, min_reward, len(ids), progress)
        stopped = play_jobs(
            list(enumerate(ids)),
            concurrency,
            rows.ended,
            aplay=play,
            make_env=config.make_env,
            stop=StopOnInterrupt(),
        )
        if stopped:
            raise WarmStartInterrupted(rows.played, len(ids))
        if not rows.written:  # an empty file would only replace what ``out`` held
            file.cancel()
    return WarmStart(
        played=rows.played,
        written=rows.written,
        dropped=rows.dropped,
        skipped=skipped,
        why=rows.why,
    )


def drop_reason(result: EpisodeResult) -> str:
    """Why an episode scored what it did, in one line: a premature ending and its cause, the
    failed strict checks (the grade's note), a DB that differs from the gold, or a figure not
    said."""
    info = result.reward_info
    if result.termination_reason not in ("user_stop", "agent_stop"):
        cause = f": {result.error}" if result.error else ""
        return f"ended {result.termination_reason}{cause}"[:300]
    if info.get("note"):
        return str(info["note"])[:300]
    if not info.get("db_match", True):
        diff = info.get("db_diff_text") or []
        return "the DB differs from the gold" + (f": {diff[0]}" if diff else "")[:300]
    if info.get("communicate_reward") == 0.0:
        return "a figure to say was not said"
    return f"reward {result.reward:g}"


def _thin(task: Task, benchmark: str) -> bool:
    """Whether the gold agent's dialogue on ``task`` would show nothing but a greeting."""
    if task.communicate_info or any(a.name in WRITE_TOOLS for a in task.actions):
        return False
    return task_intent(task, benchmark) is None
