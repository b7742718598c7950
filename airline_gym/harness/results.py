"""Results files in tau2-bench's format, pass^k, summaries and run-to-run comparison.

A results file is the JSON that tau2-bench's runner writes (and its viewer and our ``regrade``
read): top-level ``timestamp``, ``info`` (agent and user models, task set, trials, seed, ...),
``tasks`` (the task records as in tasks.json) and ``simulations``. Each simulation holds ``id``,
``task_id``, ``trial``, ``seed``, ``termination_reason``, ``reward_info`` (``reward``,
``db_check``, ``communicate_checks``, ``action_checks``, ``reward_basis``, ``reward_breakdown``,
``info``), ``messages`` in tau2's format, ``agent_cost``, ``user_cost``, ``duration`` and
timestamps.

Our OpenAI-format episode messages become tau2 messages with :func:`tau2_messages`: tool calls
``{"id", "name", "arguments": dict, "requestor": "assistant"}`` and tool results ``{"id",
"role": "tool", "content", "requestor": "assistant", "error"}``. A call of our ``done`` tool
becomes the text ``###STOP###``, as tau2's gym agent records it; arguments that are not a JSON
object are kept as ``{"_raw_arguments": ...}`` (such a call is an error either way).
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from airline_gym.domain.grading import GRADED_TERMINATIONS, Grade
from airline_gym.domain.prompts import STOP
from airline_gym.domain.tasks import Task
from airline_gym.domain.transcript import decode_arguments
from airline_gym.env.actions import DONE_TOOL
from airline_gym.errors import ConfigError, MissingFileError, require

__all__ = [
    "Comparison",
    "Results",
    "TaskComparison",
    "compare",
    "format_summary",
    "is_success",
    "now",
    "pass_hat_k",
    "plot_pass_hat_k",
    "reward_info",
    "summarize",
    "task_outcomes",
    "tau2_messages",
]

JSONObject = dict[str, Any]
_AGENT = "assistant"
RAW_ARGUMENTS = "_raw_arguments"


def now() -> str:
    """The current local time in tau2's format (ISO 8601, microseconds)."""
    return datetime.now().isoformat()


def is_success(reward: Any) -> bool:
    """tau2's success test: the reward is 1 (within 1e-6); a missing reward is a failure."""
    return isinstance(reward, int | float) and (1 - 1e-6) <= reward <= (1 + 1e-6)


# --- the file -------------------------------------------------------------------------------
@dataclass
class Results:
    """One results file: ``info``, ``tasks`` (raw task records) and ``simulations`` (dicts)."""

    info: JSONObject = field(default_factory=dict)
    tasks: list[JSONObject] = field(default_factory=list)
    simulations: list[JSONObject] = field(default_factory=list)
    timestamp: str = field(default_factory=now)

    @classmethod
    def from_data(cls, data: Any, source: str = "results") -> Results:
        """From parsed JSON: a results object, or a bare list of simulations."""
        if isinstance(data, list):
            data = {"simulations": data}
        if not isinstance(data, dict) or not isinstance(data.get("simulations"), list):
            raise ConfigError(f"{source}: not a results file (expected 'simulations' or a list)")
        sims = data["simulations"]
        for i, sim in enumerate(sims):
            if not isinstance(sim, dict) or "task_id" not in sim:
                raise ConfigError(f"{source}: simulation {i} is not an object with a 'task_id'")
        info, tasks = data.get("info") or {}, data.get("tasks") or []
        if not isinstance(info, dict) or not isinstance(tasks, list):
            raise ConfigError(f"{source}: 'info' must be an object and 'tasks' a list")
        return cls(
            info=info,
            tasks=tasks,
            simulations=sims,
            timestamp=str(data.get("timestamp") or now()),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """Read a results file (raises ``FileNotFoundError`` or a one-line ``ValueError``)."""
        path = Path(path)
        if not path.is_file():
            raise MissingFileError(f"no such results file: {path}")
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except ValueError as exc:
                raise ConfigError(f"{path}: not valid JSON ({exc})") from None
        return cls.from_data(data, str(path))

    def to_dict(self) -> JSONObject:
        """The file's JSON object."""
        return {
            "timestamp": self.timestamp,
            "info": self.info,
            "tasks": self.tasks,
            "simulations": self.simulations,
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically (temp file, then rename): a crash never leaves a partial file."""
        write_atomic(path, self.header(), [encode(s) for s in self.simulations])

    def header(self) -> JSONObject:
        """Everything but the simulations."""
        return {"timestamp": self.timestamp, "info": self.info, "tasks": self.tasks}

    def finished(self) -> set[tuple[str, int]]:
        """The (task id, trial) pairs that have a simulation."""
        return {(str(s["task_id"]), int(s.get("trial") or 0)) for s in self.simulations}


def encode(obj: Any) -> str:
    """One compact JSON line (UTF-8 text kept as is)."""
    return json.dumps(obj, ensure_ascii=False)


def write_atomic(
    path: str | os.PathLike[str], header: JSONObject, sim_lines: Sequence[str]
) -> None:
    """Write a results file from its header and pre-encoded simulations (one per line).

    The text goes to a temp file in the same folder, which is then renamed over ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = ["{"]
    parts.append(f'"timestamp": {encode(header.get("timestamp") or now())},')
    parts.append(f'"info": {encode(header.get("info") or {})},')
    tasks = header.get("tasks") or []
    parts.append('"tasks": [' + ("\n" if tasks else ""))
    parts.append(",\n".join(encode(t) for t in tasks))
    parts.append("],")
    parts.append('"simulations": [' + ("\n" if sim_lines else ""))
    parts.append(",\n".join(sim_lines))
    parts.append("]")
    parts.append("}\n")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; give it a normal file's mode
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join(parts))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- converting an episode ------------------------------------------------------------------
def _tau2_call(call: Mapping[str, Any]) -> JSONObject:
    function = call.get("function") or {}
    raw = function.get("arguments") if function else call.get("arguments")
    arguments = decode_arguments(raw)
    if not isinstance(arguments, dict):
        arguments = {RAW_ARGUMENTS: raw}
    return {
        "id": str(call.get("id") or ""),
        "name": str(function.get("name") if function else call.get("name")),
        "arguments": arguments,
        "requestor": _AGENT,
    }


def _call_name(call: Mapping[str, Any]) -> Any:
    function = call.get("function")
    return function.get("name") if isinstance(function, Mapping) else call.get("name")


def tau2_messages(
    messages: Sequence[Mapping[str, Any]], meta: Sequence[Mapping[str, Any]] | None = None
) -> list[JSONObject]:
    """OpenAI-format episode messages as tau2 messages.

    ``meta[i]`` may give ``timestamp``, ``cost``, ``usage`` and ``raw_data`` for ``messages[i]``.
    Our ``system`` error notes (invalid actions) are dropped; ``done`` becomes ``###STOP###``.
    """
    out: list[JSONObject] = []
    done_ids: set[str] = set()

    def add(message: JSONObject, extra: Mapping[str, Any]) -> None:
        message["turn_idx"] = len(out)
        message["timestamp"] = extra.get("timestamp")
        if message["role"] != "tool":
            message["cost"] = extra.get("cost")
            message["usage"] = extra.get("usage")
            message["raw_data"] = extra.get("raw_data")
        out.append(message)

    stop_after_tools: Mapping[str, Any] | None = None
    for index, message in enumerate(messages):
        extra = meta[index] if meta is not None and index < len(meta) else {}
        role = message.get("role")
        if role != "tool" and stop_after_tools is not None:
            add({"role": _AGENT, "content": STOP, "tool_calls": None}, stop_after_tools)
            stop_after_tools = None
        if role == "assistant":
            calls = list(message.get("tool_calls") or [])
            done = [c for c in calls if _call_name(c) == DONE_TOOL]
            done_ids.update(str(c.get("id") or "") for c in done)
            kept = [_tau2_call(c) for c in calls if _call_name(c) != DONE_TOOL]
            content = message.get("content")
            if done and not kept:  # done alone (with or without text): one stop message
                content = f"{content}\n{STOP}" if content and content.strip() else STOP
            elif done:
                stop_after_tools = extra
            add({"role": _AGENT, "content": content, "tool_calls": kept or None}, extra)
        elif role == "user":
            add({"role": "user", "content": message.get("content"), "tool_calls": None}, extra)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or message.get("id") or "")
            if call_id in done_ids:
                continue
            content = message.get("content")
            error = isinstance(content, str) and content.startswith("Error:")
            tool = {
                "id": call_id,
                "role": "tool",
                "content": content,
                "requestor": _AGENT,
                "error": error,
            }
            add(tool, extra)
    if stop_after_tools is not None:
        add({"role": _AGENT, "content": STOP, "tool_calls": None}, stop_after_tools)
    return out


def reward_info(
    grade: Grade,
    task: Task,
    messages: Sequence[Mapping[str, Any]] = (),
    error: str | None = None,
) -> JSONObject:
    """tau2's ``reward_info`` for a grade; ``messages`` are the graded (OpenAI) messages, used
    to quote where each communicate string was said; ``error`` is an agent/user failure cause."""
    if grade.termination_reason not in GRADED_TERMINATIONS:
        info: JSONObject = {"note": grade.note}
        if error:
            info["error"] = error
        return {
            "reward": 0.0,
            "db_check": None,
            "env_assertions": None,
            "action_checks": None,
            "nl_assertions": None,
            "communicate_checks": None,
            "reward_basis": None,
            "reward_breakdown": None,
            "info": info,
        }
    checks = None
    if task.communicate_info:
        checks = []
        for check in grade.communicate_checks:
            if check.met and check.message_index is not None:
                said = messages[check.message_index].get("content") if messages else ""
                why = f"Information '{check.info}' communicated in the message:\n '{said}'"
            else:
                why = f"Information '{check.info}' not communicated."
            checks.append({"info": check.info, "met": check.met, "justification": why})
    gold = {a.action_id: a for a in task.actions}
    action_checks = []
    for action_check in grade.action_checks:
        action = gold.get(action_check.action_id)
        action_checks.append(
            {
                "action": {
                    "action_id": action_check.action_id,
                    "requestor": _AGENT,
                    "name": action_check.name,
                    "arguments": action_check.arguments,
                    "info": None,
                    "compare_args": None
                    if action is None or action.compare_args is None
                    else list(action.compare_args),
                },
                "action_match": action_check.met,
                "action_reward": float(action_check.met),
            }
        )
    env_info = {"db_diff": [str(d) for d in grade.db_diff]} if grade.db_diff else None
    communicate_info = (
        None if task.communicate_info else {"note": "No communicate_info to evaluate"}
    )
    return {
        "reward": grade.reward,
        "db_check": {"db_match": grade.db_match, "db_reward": grade.db_reward},
        "env_assertions": [],
        "action_checks": action_checks,
        "nl_assertions": None,
        "communicate_checks": checks,
        "reward_basis": list(grade.reward_basis),
        "reward_breakdown": dict(grade.breakdown),
        "info": {"env": env_info, "nl": None, "communicate": communicate_info, "action": None},
    }


# --- metrics --------------------------------------------------------------------------------
def _simulations(results: Results | Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[Any]:
    if isinstance(results, Results):
        return results.simulations
    if isinstance(results, Mapping):
        return list(results.get("simulations") or [])
    return list(results)


def _num_trials(results: Any) -> int | None:
    info = results.info if isinstance(results, Results) else None
    if isinstance(results, Mapping):
        info = results.get("info")
    value = info.get("num_trials") if isinstance(info, Mapping) else None
    return value if isinstance(value, int) and value > 0 else None


def sim_reward(sim: Mapping[str, Any]) -> float:
    """A simulation's recorded reward (0 when it has none)."""
    info = sim.get("reward_info")
    reward = info.get("reward") if isinstance(info, Mapping) else None
    return float(reward) if isinstance(reward, int | float) else 0.0


def task_outcomes(results: Any) -> dict[str, list[float]]:
    """Task id -> the rewards of its simulations, tasks in order of first appearance."""
    out: dict[str, list[float]] = {}
    for sim in _simulations(results):
        out.setdefault(str(sim["task_id"]), []).append(sim_reward(sim))
    return out


def pass_hat_k(results: Any) -> dict[int, float]:
    """pass^k for k = 1..K, exactly as tau2-bench's ``agent_metrics`` computes it.

    For a task with n simulations of which c succeeded (reward 1), pass^k = C(c, k) / C(n, k);
    the metric is the mean over tasks. K is ``info.num_trials`` (the largest trial count when the
    file has none), lowered to the smallest number of simulations of any task, so that every
    task has at least k trials. ``results`` is a :class:`Results`, its dict, or simulations.
    """
    outcomes = task_outcomes(results)
    if not outcomes:
        return {}
    max_k = _num_trials(results) or max(len(r) for r in outcomes.values())
    max_k = min(max_k, min(len(r) for r in outcomes.values()))
    out = {}
    for k in range(1, max_k + 1):
        values = [
            math.comb(sum(map(is_success, rewards)), k) / math.comb(len(rewards), k)
            for rewards in outcomes.values()
        ]
        out[k] = sum(values) / len(values)
    return out


def _count_steps(messages: Sequence[Mapping[str, Any]]) -> int:
    """Steps as the reference counts them: agent and user messages, one per tool batch; the
    greeting is not a step."""
    steps, in_tools = 0, False
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            steps += not in_tools
            in_tools = True
            continue
        in_tools = False
        if role in ("assistant", "user") and not (index == 0 and role == "assistant"):
            steps += 1
    return steps


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _total(values: Iterable[Any]) -> float | None:
    numbers = [v for v in values if isinstance(v, int | float)]
    return sum(numbers) if numbers else None


def summarize(results: Any) -> JSONObject:
    """The figures of a run: pass^k, mean reward, terminations, errors, steps, cost, tokens."""
    sims = _simulations(results)
    outcomes = task_outcomes(sims)
    tool_errors = [
        sum(1 for m in s.get("messages") or [] if m.get("role") == "tool" and m.get("error"))
        for s in sims
    ]
    steps = [_count_steps(s.get("messages") or []) for s in sims]
    tokens: Counter[str] = Counter()
    for sim in sims:
        for message in sim.get("messages") or []:
            usage = message.get("usage") if message.get("role") == _AGENT else None
            for key, value in (usage or {}).items():
                if key in ("prompt_tokens", "completion_tokens") and isinstance(value, int):
                    tokens[key] += value
    errors = []
    for sim in sims:
        info = (sim.get("reward_info") or {}).get("info") or {}
        if isinstance(info, Mapping) and info.get("error"):
            errors.append(f"task {sim['task_id']} trial {sim.get('trial')}: {info['error']}")
    agent_cost = _total(s.get("agent_cost") for s in sims)
    rewards = [sim_reward(s) for s in sims]
    return {
        "simulations": len(sims),
        "tasks": len(outcomes),
        "trials": max((len(r) for r in outcomes.values()), default=0),
        "pass_hat_k": pass_hat_k(results),
        "successes": sum(map(is_success, rewards)),
        "mean_reward": _mean(rewards),
        "terminations": dict(Counter(str(s.get("termination_reason")) for s in sims)),
        "tool_errors_per_episode": _mean(tool_errors),
        "steps_per_episode": _mean(steps),
        "max_steps_seen": max(steps, default=0),
        "agent_cost": agent_cost,
        "agent_cost_per_episode": None if agent_cost is None else agent_cost / len(sims),
        "user_cost": _total(s.get("user_cost") for s in sims),
        "agent_tokens": dict(tokens) or None,
        "duration_per_episode": _mean([float(s["duration"]) for s in sims if "duration" in s]),
        "errors": errors,
    }


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def format_summary(summary: Mapping[str, Any], max_errors_shown: int = 5) -> str:
    """A readable block of :func:`summarize` figures."""
    lines = [
        f"simulations: {summary['simulations']} ({summary['tasks']} tasks, "
        f"up to {summary['trials']} trial{'' if summary['trials'] == 1 else 's'} each)",
        "pass^k: "
        + (
            "  ".join(f"k={k}: {v:.3f}" for k, v in summary["pass_hat_k"].items())
            if summary["pass_hat_k"]
            else "-"
        ),
        f"mean reward: {_fmt(summary['mean_reward'])} "
        f"({summary['successes']}/{summary['simulations']} successes)",
        "terminations: "
        + ", ".join(f"{k} {v}" for k, v in sorted(summary["terminations"].items())),
        f"tool errors per episode: {_fmt(summary['tool_errors_per_episode'], '.2f')}",
        f"steps per episode: {_fmt(summary['steps_per_episode'], '.1f')} "
        f"(max {summary['max_steps_seen']})",
    ]
    if summary["agent_cost"] is not None:
        lines.append(
            f"agent cost: ${summary['agent_cost']:.4f} "
            f"(${summary['agent_cost_per_episode']:.4f} per episode)"
        )
    if summary["user_cost"] is not None:
        lines.append(f"user cost: ${summary['user_cost']:.4f}")
    if summary["agent_tokens"]:
        lines.append(
            "agent tokens: " + ", ".join(f"{k} {v}" for k, v in summary["agent_tokens"].items())
        )
    errors = summary["errors"]
    for error in errors[:max_errors_shown]:
        lines.append(f"error: {error}")
    if len(errors) > max_errors_shown:
        lines.append(f"... and {len(errors) - max_errors_shown} more errors")
    return "\n".join(lines)


# --- comparing runs -------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskComparison:
    """One task in two runs: (successes, simulations) in each, ``None`` where absent."""

    task_id: str
    a: tuple[int, int] | None
    b: tuple[int, int] | None

    @property
    def rate_a(self) -> float | None:
        """Success rate in run A."""
        return None if self.a is None else self.a[0] / self.a[1]

    @property
    def rate_b(self) -> float | None:
        """Success rate in run B."""
        return None if self.b is None else self.b[0] / self.b[1]

    @property
    def change(self) -> str:
        """``improved``, ``regressed``, ``same``, ``only in A`` or ``only in B``."""
        if self.rate_a is None:
            return "only in B"
        if self.rate_b is None:
            return "only in A"
        if self.rate_b > self.rate_a:
            return "improved"
        return "regressed" if self.rate_b < self.rate_a else "same"


@dataclass(frozen=True)
class Comparison:
    """Two runs task by task, with each run's pass^k and mean reward."""

    tasks: tuple[TaskComparison, ...]
    pass_hat_k_a: dict[int, float]
    pass_hat_k_b: dict[int, float]
    mean_reward_a: float | None
    mean_reward_b: float | None

    def ids(self, change: str) -> list[str]:
        """Ids of the tasks whose :attr:`TaskComparison.change` is ``change``."""
        return [t.task_id for t in self.tasks if t.change == change]

    @property
    def improved(self) -> list[str]:
        """Tasks whose success rate went up from A to B (a flip, with one trial)."""
        return self.ids("improved")

    @property
    def regressed(self) -> list[str]:
        """Tasks whose success rate went down from A to B."""
        return self.ids("regressed")

    def to_dict(self) -> JSONObject:
        """JSON-ready data."""
        return {
            "pass_hat_k_a": self.pass_hat_k_a,
            "pass_hat_k_b": self.pass_hat_k_b,
            "mean_reward_a": self.mean_reward_a,
            "mean_reward_b": self.mean_reward_b,
            "improved": self.improved,
            "regressed": self.regressed,
            "tasks": [
                {
                    "task_id": t.task_id,
                    "a": None if t.a is None else {"successes": t.a[0], "trials": t.a[1]},
                    "b": None if t.b is None else {"successes": t.b[0], "trials": t.b[1]},
                    "change": t.change,
                }
                for t in self.tasks
            ],
        }


def task_sort_key(task_id: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order, then the others alphabetically."""
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)


def compare(a: Any, b: Any) -> Comparison:
    """Compare two runs (:class:`Results`, their dicts, or lists of simulations) task by task."""
    outcomes_a, outcomes_b = task_outcomes(a), task_outcomes(b)

    def tally(rewards: list[float] | None) -> tuple[int, int] | None:
        return None if rewards is None else (sum(map(is_success, rewards)), len(rewards))

    ids = sorted(set(outcomes_a) | set(outcomes_b), key=task_sort_key)
    rewards_a = [r for rs in outcomes_a.values() for r in rs]
    rewards_b = [r for rs in outcomes_b.values() for r in rs]
    return Comparison(
        tasks=tuple(
            TaskComparison(t, tally(outcomes_a.get(t)), tally(outcomes_b.get(t))) for t in ids
        ),
        pass_hat_k_a=pass_hat_k(a),
        pass_hat_k_b=pass_hat_k(b),
        mean_reward_a=_mean(rewards_a),
        mean_reward_b=_mean(rewards_b),
    )


# --- plotting -------------------------------------------------------------------------------
def plot_pass_hat_k(
    curves: Mapping[str, Mapping[int, float]], path: str | os.PathLike[str], title: str = ""
) -> None:
    """Draw pass^k against k, one line per named curve, into an image file (needs matplotlib).

    Raises :class:`~airline_gym.errors.MissingDependencyError` (an ``ImportError``) naming the
    ``plot`` extra when matplotlib is missing.
    """
    figure = require("matplotlib.figure", "plot", "plotting").Figure(
        figsize=(6, 4), layout="constrained"
    )
    axes = figure.add_subplot()
    for label, values in curves.items():
        ks = sorted(values)
        axes.plot(ks, [values[k] for k in ks], marker="o", label=label)
    axes.set_xlabel("k")
    axes.set_ylabel("pass^k")
    axes.set_ylim(0, 1.02)
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.grid(alpha=0.3)
    if title:
        axes.set_title(title)
    if curves:
        axes.legend()
    figure.savefig(os.fspath(path), dpi=120)
