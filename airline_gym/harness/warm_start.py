"""Warm-start data: the gold agent's conversations with the scripted customer, as SFT rows.

:func:`warm_start` plays a built-in gold agent (``gold-dialogue`` by default: the gold calls in
a dialogue that asks for a yes before each write and refuses what the policy refuses) against
the offline scripted customer on every selected task (tasks with an intent get the customer that
plays it), keeps the episodes that score at least ``min_reward``, and writes them with
:func:`~airline_gym.harness.export.write_jsonl`: one JSON line per conversation with
``messages`` (system prompt first; assistant ``tool_calls`` with JSON-string arguments; ``tool``
results with ``tool_call_id``) and ``tools`` (the schemas the agent was offered), which
``datasets.load_dataset("json", ...)`` loads and TRL's ``SFTTrainer`` takes as a conversational
dataset with tools.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from airline_gym.agents.registry import builtin_agent
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, benchmark_tasks
from airline_gym.domain.tasks import Task, load_task_set
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import EvalConfig, select_task_ids
from airline_gym.harness.export import write_jsonl
from airline_gym.harness.runner import EpisodeResult, run_episodes
from airline_gym.users.intent_source import task_intent

__all__ = ["WARM_START_AGENTS", "WarmStart", "drop_reason", "warm_start"]

#: The agents whose conversations make warm-start data.
WARM_START_AGENTS: tuple[str, ...] = ("gold-dialogue", "gold")


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
) -> WarmStart:
    """Play ``agent`` with the scripted customer on the selected tasks and write the episodes
    scoring at least ``min_reward`` to ``out`` (JSON Lines; see the module docstring)."""
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
    task_set = load_task_set(benchmark_tasks(tasks, benchmark), data_dir)
    selected = select_task_ids(task_set, config)
    skipped = [t for t in selected if _thin(task_set[t], benchmark)]
    ids = [t for t in selected if t not in skipped]
    results = run_episodes(
        config.make_env, lambda: builtin_agent(agent, task_set), [(t, 0) for t in ids], concurrency
    )
    kept = [r for r in results if r.reward >= min_reward]
    low = [r for r in results if r.reward < min_reward]
    dropped = {r.task_id: r.reward for r in low}
    written = write_jsonl(kept, out)
    why = {r.task_id: drop_reason(r) for r in low}
    return WarmStart(len(results), written, dropped, skipped, why)


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
