"""What a results file records about its run (``info``), and the check before resuming one.

``info`` follows tau2-bench (``agent_info``, ``user_info``, ``environment_info``, ``num_trials``,
``seed``...) plus airline-gym's own keys (``airline_gym_version``, ``benchmark``, ``task_set``,
``task_ids``, ``tasks_sha256``: the hash of the task records the run played, as the file's
``tasks`` holds them). API keys are never recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airline_gym.agents import LiteLLMAgent
from airline_gym.data.limits import TEXT_MAX_BYTES, read_limited_text
from airline_gym.errors import ConfigError
from airline_gym.harness.results import JSONObject
from airline_gym.harness.results.comparability import canonical_task

if TYPE_CHECKING:
    from airline_gym.harness.evaluate import EvalConfig

__all__ = [
    "check_resumable",
    "check_same_tasks",
    "describe_agent",
    "fingerprint",
    "run_info",
    "tasks_sha256",
    "user_info",
]


def describe_agent(agent: Any) -> JSONObject:
    """tau2's ``agent_info`` for a built-in name or an agent (API keys are never recorded)."""
    if isinstance(agent, str):
        return {"implementation": f"{agent}_agent", "llm": None, "llm_args": None}
    if isinstance(agent, LiteLLMAgent):
        model = agent.chat_model
        llm_args: JSONObject = {"temperature": model.temperature}
        if model.api_base:
            llm_args["api_base"] = model.api_base
        if model.timeout is not None:
            llm_args["timeout"] = model.timeout
        llm_args.update({k: v for k, v in model.extra.items() if "key" not in k.lower()})
        return {"implementation": "LiteLLMAgent", "llm": agent.model, "llm_args": llm_args}
    model_name = getattr(agent, "model", None)
    return {
        "implementation": type(agent).__name__,
        "llm": model_name if isinstance(model_name, str) else None,
        "llm_args": None,
    }


def user_info(config: EvalConfig) -> JSONObject:
    """tau2's ``user_info`` of the run's customer."""
    kind = config.user if isinstance(config.user, str) else type(config.user).__name__
    if kind != "llm":
        return {"implementation": f"{kind}_user", "llm": None, "llm_args": None}
    from airline_gym.domain.benchmarks import guidelines_path
    from airline_gym.users import DEFAULT_USER_MODEL, USER_MODEL_ENV

    model = config.user_model or os.environ.get(USER_MODEL_ENV) or DEFAULT_USER_MODEL
    args = {k: v for k, v in (config.user_llm_args or {}).items() if "key" not in k.lower()}
    args.setdefault("temperature", 0.0)
    guidelines = read_limited_text(
        guidelines_path(config.benchmark, config.data_dir), TEXT_MAX_BYTES, "text file"
    )
    return {
        "implementation": "user_simulator",
        "llm": model,
        "llm_args": args,
        "global_simulation_guidelines": guidelines,
    }


def tasks_sha256(records: Sequence[Mapping[str, Any]]) -> str:
    """The SHA-256 of task records, in order, each as its canonical JSON (keys sorted, without
    the nulls and defaults a writer may add): the same tasks give the same hash however the
    file that held them was written."""
    text = json.dumps([canonical_task(r) for r in records], ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def run_info(
    config: EvalConfig,
    agent_info: JSONObject,
    ids: list[str],
    tasks: Sequence[Mapping[str, Any]] = (),
) -> JSONObject:
    """The results file's ``info`` for a run of ``ids`` (whose records are ``tasks``) with
    ``config``."""
    from airline_gym import __version__
    from airline_gym.domain.prompts import policy

    return {
        "git_commit": "",
        "num_trials": config.trials,
        "max_steps": config.max_steps,
        "max_errors": config.max_errors,
        "user_info": user_info(config),
        "agent_info": agent_info,
        "environment_info": {
            "domain_name": "airline",
            "policy": policy(config.data_dir),
            "tool_defs": None,
        },
        "seed": config.seed,
        "protocol": config.protocol,
        # only the leaderboard protocol sends what tau2 run sends (docs/evaluating.md)
        "leaderboard_comparable": config.protocol == "leaderboard",
        "airline_gym_version": __version__,
        "benchmark": config.benchmark,
        "task_set": config.task_set_name,
        "task_split": None if config.task_ids else config.split,
        "task_ids": ids,
        "tasks_sha256": tasks_sha256(tasks),
        **_basis_info(config),
        **config.extra_info,
    }


def _basis_info(config: EvalConfig) -> JSONObject:
    """``reward_basis`` (and the judge's model) when the run is graded on its own basis."""
    if config.reward_basis is None:
        return {}
    info: JSONObject = {"reward_basis": list(config.reward_basis)}
    if config.judge is not None:
        info["judge_info"] = {"llm": getattr(config.judge, "model", type(config.judge).__name__)}
    return info


def fingerprint(info: Mapping[str, Any]) -> dict[str, Any]:
    """What must not change when a run is resumed, by the option that sets it."""
    agent, user = info.get("agent_info"), info.get("user_info")
    agent = agent if isinstance(agent, Mapping) else {}
    user = user if isinstance(user, Mapping) else {}
    return {
        "--benchmark": info.get("benchmark", "tau2"),
        "--tasks": info.get("task_set"),
        "--seed": info.get("seed"),
        "--max-steps": info.get("max_steps"),
        "--max-errors": info.get("max_errors"),
        "--protocol": info.get("protocol", "gym"),
        "--reward-basis": info.get("reward_basis"),
        "the agent": [agent.get("implementation"), agent.get("llm")],
        "the customer": [user.get("implementation"), user.get("llm")],
        "the agent's": _sampling(agent.get("llm_args")),
        "the customer's": _sampling(user.get("llm_args")),
    }


#: Request settings that do not change what a model replies (where it is, how often to retry).
_NOT_SAMPLING = frozenset({"api_base", "max_retries", "num_retries"})


def _sampling(llm_args: Any) -> dict[str, Any]:
    """The settings that shape a model's replies (temperature, max_tokens, timeout, ...)."""
    if not isinstance(llm_args, Mapping):
        return {}
    return {
        str(k): v for k, v in llm_args.items() if k not in _NOT_SAMPLING and "key" not in k.lower()
    }


def _first_change(before: dict[str, Any], now: dict[str, Any]) -> tuple[str, Any, Any]:
    """(setting, old value, new value) of the first setting that differs."""
    name = next(k for k in sorted({*before, *now}) if before.get(k, _UNSET) != now.get(k, _UNSET))
    return name, before.get(name, _UNSET), now.get(name, _UNSET)


def _plain(label: str, value: Any) -> str:
    """A recorded setting as a user writes it (no Python reprs): ``random_agent``,
    ``llm_agent (gpt-4.1)``, ``DB,ACTION``, ``0.5``."""
    if value is _UNSET or value is None:
        return "each task's own" if label == "--reward-basis" else "unset"
    if label in ("the agent", "the customer") and isinstance(value, list):
        impl, llm = [*value, None, None][:2]
        return f"{impl} ({llm})" if llm else str(impl)
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


class _Unset:
    def __repr__(self) -> str:
        return "unset"


_UNSET = _Unset()


def check_resumable(path: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Refuse to mix runs: same task set, seed, limits, agent and customer, and the same
    sampling settings of each model (temperature, max_tokens, timeout, other llm args)."""
    if "airline_gym_version" not in old:
        raise ConfigError(f"cannot resume {path}: it was not written by airline-gym eval")
    before, now_ = fingerprint(old), fingerprint(new)
    for label, value in now_.items():
        if before[label] == value:
            continue
        if label.endswith("'s"):  # model settings: name the one that changed
            name, was, now = _first_change(before[label], value)
            raise ConfigError(
                f"cannot resume {path}: it was run with {label} {name} {_plain(name, was)}, "
                f"this run has {_plain(name, now)} (keep --temperature, --max-tokens, --timeout "
                "and --llm-args/--user-llm-args as they were)"
            )
        raise ConfigError(
            f"cannot resume {path}: it was run with {label} {_plain(label, before[label])}, "
            f"this run has {_plain(label, value)}"
        )


def check_same_tasks(
    path: Path,
    info: Mapping[str, Any],
    played: Sequence[Mapping[str, Any]],
    now: Mapping[str, Mapping[str, Any]],
    source: str,
) -> None:
    """Refuse to resume a run whose tasks are not the ones ``source`` has now (a tasks file
    written again under the same name): ``played`` are the task records the run embeds,
    ``info["tasks_sha256"]`` their recorded hash (a run from before it was recorded is checked
    by its records alone), ``now`` the current records by id."""
    current = [now.get(str(t.get("id"))) for t in played]
    if all(c is not None for c in current):
        recorded = info.get("tasks_sha256")
        expected = recorded if isinstance(recorded, str) else tasks_sha256(played)
        if tasks_sha256(current) == expected:  # type: ignore[arg-type]
            return
    differ = [
        str(t.get("id"))
        for t, c in zip(played, current, strict=True)
        if c is None or canonical_task(t) != canonical_task(c)
    ]
    shown = ", ".join(differ[:8]) + (f" and {len(differ) - 8} more" if len(differ) > 8 else "")
    which = (
        f"{len(differ)} of the run's {len(played)} tasks differ ({shown})"
        if differ
        else f"the tasks it records do not match their hash {str(info.get('tasks_sha256'))[:12]}"
    )
    raise ConfigError(
        f"cannot resume {path}: the tasks in {source} are not the ones it was run on: {which}; "
        "resuming would mix two task sets (run it again with another --out, or restore the "
        "tasks file it was run on)"
    )
