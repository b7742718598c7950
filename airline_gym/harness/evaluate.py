"""Evaluate an agent on the airline tasks and write a tau2-bench results file.

Runs every (task, trial) pair, each episode with its own env, several at a time with
--concurrency. The results file is saved after every finished simulation (temp file, then
rename), so a killed run loses at most the episodes in flight; --resume continues it. Per-episode
seeds are derived from --seed, the task id and the trial. At the end: pass^1..pass^k, mean
reward, termination reasons, tool errors and steps per episode, and cost where reported.

The customer is the scripted one unless --user llm (or --user-model) is given; the reference
customer is an LLM (gpt-4.1).

  airline-gym eval --agent gold --out gold.json
  airline-gym eval --agent-model gpt-4.1 --user-model gpt-4.1 --trials 4 --concurrency 8 \\
      --out gpt41.json --plot gpt41.png
  airline-gym eval --agent-model openai/Qwen/Qwen2.5-7B-Instruct \\
      --api-base http://localhost:8000/v1 --user-model gpt-4.1 --out qwen.json
  airline-gym eval --agent-model gpt-4.1 --user-model gpt-4.1 --out gpt41.json --resume
  airline-gym eval --agent noop --task-ids 0,1,2 --tasks tau3-airline-tasks.json
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from airline_gym.agents import (
    AgentError,
    GoldAgent,
    LiteLLMAgent,
    NoOpAgent,
    RandomAgent,
    TransferAgent,
)
from airline_gym.domain.grading import AGENT_ERROR, USER_ERROR
from airline_gym.domain.tasks import DEFAULT_TASK_SET, TaskSet, load_task_set, task_key
from airline_gym.errors import ConfigError, UnknownIdError, require
from airline_gym.harness.results import (
    JSONObject,
    Results,
    encode,
    format_summary,
    is_success,
    now,
    reward_info,
    sim_reward,
    summarize,
    task_sort_key,
    tau2_messages,
    write_atomic,
)

__all__ = [
    "BUILTIN_AGENTS",
    "DEFAULT_SEED",
    "EvalConfig",
    "add_arguments",
    "describe_agent",
    "episode_seed",
    "evaluate",
    "run",
    "run_episode",
]

#: Agents the command line builds by name.
BUILTIN_AGENTS = ("gold", "noop", "transfer", "random")
#: tau2-bench's default base seed.
DEFAULT_SEED = 300
_ID_NAMESPACE = uuid.UUID("6f1d8f9e-4b1a-4c55-9a57-2a3e0c6b7d10")
_RETRYABLE_ENDINGS = frozenset({AGENT_ERROR, USER_ERROR})

Agent = Any
AgentFactory = Callable[[int], Agent]
Progress = Callable[[JSONObject | None, int, int, Results], None]


@dataclass
class EvalConfig:
    """What to run: the tasks, trials, customer and limits (see ``airline-gym eval --help``)."""

    tasks: str | os.PathLike[str] = DEFAULT_TASK_SET
    split: str = "base"
    task_ids: Sequence[str | int] | None = None
    trials: int = 1
    seed: int = DEFAULT_SEED
    max_steps: int = 200
    max_errors: int = 10
    user: Any = "scripted"
    user_model: str | None = None
    user_llm_args: dict[str, Any] | None = None
    concurrency: int = 1
    data_dir: str | os.PathLike[str] | None = None
    extra_info: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> None:
        """Raise a one-line ``ValueError`` for an impossible setting."""
        for name in ("trials", "concurrency", "max_steps", "max_errors"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"{name.replace('_', '-')} must be a whole number >= 1: {value!r}"
                )


def episode_seed(seed: int, task_id: str, trial: int) -> int:
    """The seed of one (task, trial), derived deterministically from the run's ``seed``."""
    digest = hashlib.sha256(f"{seed}:{task_id}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % (2**31 - 1)


# --- agents ---------------------------------------------------------------------------------
def builtin_agent(name: str, task_set: TaskSet, seed: int | None = None) -> Agent:
    """One of :data:`BUILTIN_AGENTS`."""
    if name == "gold":
        return GoldAgent(task_set)
    if name == "noop":
        return NoOpAgent()
    if name == "transfer":
        return TransferAgent()
    if name == "random":
        return RandomAgent(seed=seed)
    raise ConfigError(f"unknown agent {name!r} (choose from {', '.join(BUILTIN_AGENTS)})")


def _factory(agent: Any, task_set: TaskSet) -> AgentFactory:
    """A name, a factory ``seed -> agent``, or an agent instance (deep-copied per episode)."""
    if isinstance(agent, str):
        if agent not in BUILTIN_AGENTS:
            raise ConfigError(f"unknown agent {agent!r} (choose from {', '.join(BUILTIN_AGENTS)})")
        return lambda seed: builtin_agent(agent, task_set, seed)
    if callable(getattr(agent, "act", None)) and not isinstance(agent, type):
        return lambda seed: copy.deepcopy(agent)
    if callable(agent):
        return agent
    raise TypeError(f"agent must be a name, an agent or a factory, not {type(agent).__name__}")


def describe_agent(agent: Any) -> JSONObject:
    """tau2's ``agent_info`` for a built-in name or an agent (API keys are never recorded)."""
    if isinstance(agent, str):
        return {"implementation": f"{agent}_agent", "llm": None, "llm_args": None}
    if isinstance(agent, LiteLLMAgent):
        model = agent.chat_model
        llm_args: JSONObject = {"temperature": model.temperature}
        if model.api_base:
            llm_args["api_base"] = model.api_base
        llm_args.update({k: v for k, v in model.extra.items() if "key" not in k.lower()})
        return {"implementation": "LiteLLMAgent", "llm": agent.model, "llm_args": llm_args}
    model_name = getattr(agent, "model", None)
    return {
        "implementation": type(agent).__name__,
        "llm": model_name if isinstance(model_name, str) else None,
        "llm_args": None,
    }


# --- one episode ----------------------------------------------------------------------------
def _user_cost(user: Any) -> float | None:
    cost = getattr(user, "cost", None)
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


def run_episode(
    env: Any,
    agent: Agent,
    task_id: str | int,
    trial: int = 0,
    seed: int = 0,
    sim_id: str | None = None,
) -> JSONObject:
    """Play one episode of ``task_id`` and return its simulation record (tau2 format).

    ``env`` is an :class:`~airline_gym.env.AirlineEnv` (or a wrapper of one). When the agent
    raises (:class:`~airline_gym.agents.AgentError` or anything else) the episode ends with
    termination reason ``agent_error``, reward 0, and the cause in ``reward_info.info.error``.
    """
    base = env.unwrapped
    start, clock = now(), time.perf_counter()
    obs, info = base.reset(seed=seed, options={"task": task_key(task_id)})
    episode = base.episode
    meta: list[JSONObject] = []

    def stamp(agent_meta: JSONObject | None, user_cost: float | None) -> None:
        when = now()
        for message in episode.messages[len(meta) :]:
            role = message["role"]
            if role == "assistant":
                meta.append(agent_meta or {"timestamp": start, "cost": 0.0})
            elif role == "user":
                meta.append({"timestamp": when, "cost": user_cost})
            else:
                meta.append({"timestamp": when})

    stamp(None, _user_cost(base.user))
    error: str | None = None
    if not episode.done:
        try:
            agent.reset(info)
        except Exception as exc:
            error = _cause(exc)
    while error is None and not episode.done:
        try:
            action = agent.act(obs, info)
        except Exception as exc:
            error = _cause(exc)
            break
        agent_meta = {
            "timestamp": now(),
            "cost": getattr(agent, "last_cost", None),
            "usage": getattr(agent, "last_usage", None),
        }
        cost_before = _user_cost(base.user)
        obs, _, terminated, truncated, info = base.step(action)
        cost_after = _user_cost(base.user)
        delta = None if cost_after is None else cost_after - (cost_before or 0.0)
        stamp(agent_meta, delta)
        if terminated or truncated:
            break
    if error is not None:
        base.abort(error)
    grade = episode.grade()
    transcript = episode.transcript()
    end = now()
    agent_cost = getattr(agent, "cost", None)
    return {
        "id": sim_id or str(uuid.uuid4()),
        "task_id": episode.task.id,
        "timestamp": end,
        "start_time": start,
        "end_time": end,
        "duration": time.perf_counter() - clock,
        "termination_reason": episode.termination_reason,
        "agent_cost": agent_cost if isinstance(agent_cost, int | float) else None,
        "user_cost": _user_cost(base.user),
        "reward_info": reward_info(grade, episode.task, transcript, episode.error_detail),
        "messages": tau2_messages(episode.messages, meta),
        "trial": trial,
        "seed": seed,
    }


def _cause(exc: BaseException) -> str:
    if isinstance(exc, AgentError):
        return exc.cause
    return f"agent raised {type(exc).__name__}: {exc}"


# --- a whole run ----------------------------------------------------------------------------
def _select(task_set: TaskSet, config: EvalConfig) -> list[str]:
    if config.task_ids:
        ids = [task_key(t).strip() for t in config.task_ids]
        missing = [t for t in ids if t not in task_set]
        if missing:
            raise UnknownIdError(
                f"no task {', '.join(map(repr, missing))} in task set {task_set.name!r} "
                f"(ids: {task_set.id_range()})"
            )
        return list(dict.fromkeys(ids))
    return [t.id for t in task_set.split(config.split)]


def _user_info(config: EvalConfig) -> JSONObject:
    kind = config.user if isinstance(config.user, str) else type(config.user).__name__
    if kind != "llm":
        return {"implementation": f"{kind}_user", "llm": None, "llm_args": None}
    from airline_gym.data import data_files
    from airline_gym.users import DEFAULT_USER_MODEL, USER_MODEL_ENV

    model = config.user_model or os.environ.get(USER_MODEL_ENV) or DEFAULT_USER_MODEL
    args = {k: v for k, v in (config.user_llm_args or {}).items() if "key" not in k.lower()}
    args.setdefault("temperature", 0.0)
    guidelines = data_files(config.data_dir).user_guidelines.read_text(encoding="utf-8")
    return {
        "implementation": "user_simulator",
        "llm": model,
        "llm_args": args,
        "global_simulation_guidelines": guidelines,
    }


def _run_info(config: EvalConfig, agent_info: JSONObject, ids: list[str]) -> JSONObject:
    from airline_gym import __version__
    from airline_gym.domain.prompts import policy

    return {
        "git_commit": "",
        "num_trials": config.trials,
        "max_steps": config.max_steps,
        "max_errors": config.max_errors,
        "user_info": _user_info(config),
        "agent_info": agent_info,
        "environment_info": {
            "domain_name": "airline",
            "policy": policy(config.data_dir),
            "tool_defs": None,
        },
        "seed": config.seed,
        "airline_gym_version": __version__,
        "task_set": str(config.tasks),
        "task_split": None if config.task_ids else config.split,
        "task_ids": ids,
        **config.extra_info,
    }


def _fingerprint(info: Mapping[str, Any]) -> dict[str, Any]:
    """What must not change when a run is resumed, by the option that sets it."""
    agent, user = info.get("agent_info") or {}, info.get("user_info") or {}
    return {
        "--tasks": info.get("task_set"),
        "--seed": info.get("seed"),
        "--max-steps": info.get("max_steps"),
        "--max-errors": info.get("max_errors"),
        "the agent": [agent.get("implementation"), agent.get("llm")],
        "the customer": [user.get("implementation"), user.get("llm")],
    }


def _check_resumable(path: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Refuse to mix runs: same task set, seed, limits, agent and customer."""
    if "airline_gym_version" not in old:
        raise ConfigError(f"cannot resume {path}: it was not written by airline-gym eval")
    before, now_ = _fingerprint(old), _fingerprint(new)
    for label, value in now_.items():
        if before[label] != value:
            raise ConfigError(
                f"cannot resume {path}: it was run with {label} {before[label]!r}, "
                f"this run has {value!r}"
            )


def evaluate(
    agent: Any,
    config: EvalConfig | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    resume: bool = False,
    retry_errors: bool = False,
    progress: Progress | None = None,
    agent_info: JSONObject | None = None,
) -> Results:
    """Run ``agent`` on every (task, trial) of ``config`` and return the results.

    ``agent``: a built-in name (:data:`BUILTIN_AGENTS`), a factory ``seed -> agent`` (called
    once per episode with the episode's seed), or an agent instance (deep-copied per episode).
    ``out``: the results file, saved atomically after every finished simulation. ``resume``:
    reload ``out`` and run only the (task, trial) pairs it lacks (``retry_errors`` also reruns
    its ``agent_error``/``user_error`` simulations). ``progress(sim, done, total, results)`` is
    called once with ``sim=None`` before the first episode, then after each simulation.
    Episodes run ``config.concurrency`` at a time, in threads.
    """
    from airline_gym.env.airline_env import AirlineEnv

    config = config or EvalConfig()
    config.validate()
    if resume and out is None:
        raise ConfigError("resume needs the results file (out=...)")
    task_set = load_task_set(config.tasks, config.data_dir)
    ids = _select(task_set, config)
    make_agent = _factory(agent, task_set)
    agent_info = agent_info or describe_agent(
        agent if isinstance(agent, str) else make_agent(config.seed)
    )
    info = _run_info(config, agent_info, ids)

    def make_env() -> AirlineEnv:
        user = config.user if isinstance(config.user, str) else copy.deepcopy(config.user)
        return AirlineEnv(
            tasks=config.tasks,
            user=user,
            user_model=config.user_model if isinstance(user, str) else None,
            user_llm_args=config.user_llm_args if isinstance(user, str) else None,
            max_steps=config.max_steps,
            max_errors=config.max_errors,
            data_dir=config.data_dir,
        )

    make_env()  # in this thread first: bad settings fail here, and the shared data loads once

    path = None if out is None else Path(out)
    if path is not None:  # temp files of a killed run's unfinished saves
        for stale in path.parent.glob(f".{path.name}.*.tmp"):
            stale.unlink(missing_ok=True)
    results = Results(info=info, tasks=[task_set[t].raw for t in ids])
    if resume and path is not None and path.exists():
        old = Results.load(path)
        _check_resumable(path, old.info, info)
        keep = [
            s
            for s in old.simulations
            if not (retry_errors and s.get("termination_reason") in _RETRYABLE_ENDINGS)
        ]
        known = {str(t.get("id")) for t in old.tasks}
        info["num_trials"] = max(config.trials, int(old.info.get("num_trials") or 0))
        info["task_ids"] = list(dict.fromkeys([*(old.info.get("task_ids") or []), *ids]))
        results = Results(
            info=info,
            tasks=old.tasks + [task_set[t].raw for t in ids if t not in known],
            simulations=keep,
            timestamp=old.timestamp,
        )
    order = {t: i for i, t in enumerate(ids)}

    def sort_key(sim: Mapping[str, Any]) -> tuple[Any, ...]:
        tid = str(sim["task_id"])
        return (order.get(tid, len(order)), task_sort_key(tid), int(sim.get("trial") or 0))

    lines = {id(s): encode(s) for s in results.simulations}

    def save() -> None:
        results.simulations.sort(key=sort_key)
        if path is not None:
            write_atomic(path, results.header(), [lines[id(s)] for s in results.simulations])

    finished = results.finished()
    todo = [(t, trial) for trial in range(config.trials) for t in ids if (t, trial) not in finished]
    total = len(results.simulations) + len(todo)
    if path is not None:
        save()
    if progress is not None:
        progress(None, len(results.simulations), total, results)

    def one(task_id: str, trial: int) -> JSONObject:
        seed = episode_seed(config.seed, task_id, trial)
        env = make_env()
        name = f"{info['task_set']}|{agent_info.get('implementation')}|{agent_info.get('llm')}"
        sim_id = str(uuid.uuid5(_ID_NAMESPACE, f"{name}|{task_id}|{trial}|{seed}"))
        return run_episode(env, make_agent(seed), task_id, trial, seed, sim_id)

    with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
        pending: set[Future[JSONObject]] = set()
        queue = list(reversed(todo))
        try:
            while queue or pending:
                while queue and len(pending) < config.concurrency:
                    pending.add(pool.submit(one, *queue.pop()))
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    sim = future.result()
                    results.simulations.append(sim)
                    lines[id(sim)] = encode(sim)
                    save()
                    if progress is not None:
                        progress(sim, len(results.simulations), total, results)
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    save()
    return results


# --- command line ---------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym eval``."""
    agent = parser.add_argument_group("agent (one of)")
    who = agent.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", choices=BUILTIN_AGENTS, help="a built-in agent")
    who.add_argument("--agent-model", metavar="MODEL", help="litellm model of an LLM agent")
    agent.add_argument("--api-base", metavar="URL", help="OpenAI-compatible URL for the agent")
    agent.add_argument("--api-key", help="API key for the agent's model (default: from env)")
    agent.add_argument("--temperature", type=float, default=0.0, help="agent temperature (0)")
    user = parser.add_argument_group("customer")
    user.add_argument(
        "--user",
        choices=("scripted", "llm"),
        help="scripted (offline) or llm; default llm if --user-model is given, else scripted",
    )
    user.add_argument("--user-model", metavar="MODEL", help="litellm model (default gpt-4.1)")
    user.add_argument("--user-api-base", metavar="URL", help="OpenAI-compatible URL for the user")
    user.add_argument("--user-api-key", help="API key for the user's model (default: from env)")
    llm = parser.add_argument_group("LLM calls (agent and customer)")
    llm.add_argument("--timeout", type=float, default=60.0, help="seconds per request (60)")
    llm.add_argument("--max-retries", type=int, default=3, help="retries per request (3)")
    run_ = parser.add_argument_group("run")
    run_.add_argument("--tasks", default=DEFAULT_TASK_SET, help="'tau2' or a tasks.json path")
    run_.add_argument("--split", default="base", help="train, test or base (all; default)")
    run_.add_argument("--task-ids", metavar="IDS", help="comma-separated task ids, e.g. 1,2,3")
    run_.add_argument("--trials", type=int, default=1, help="trials per task (default 1)")
    run_.add_argument("--concurrency", type=int, default=1, help="episodes in parallel (1)")
    run_.add_argument("--seed", type=int, default=DEFAULT_SEED, help="base seed (300)")
    run_.add_argument("--max-steps", type=int, default=200, help="step budget (200)")
    run_.add_argument("--max-errors", type=int, default=10, help="tool errors allowed (10)")
    output = parser.add_argument_group("output")
    output.add_argument("--out", metavar="FILE", help="results file (default results/<...>.json)")
    output.add_argument("--resume", action="store_true", help="continue the run in --out")
    output.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume, also rerun agent_error/user_error simulations",
    )
    output.add_argument("--plot", metavar="PNG", help="draw the pass^k curve (needs matplotlib)")
    output.add_argument("--json", action="store_true", help="print the summary as JSON")


def local_api_key(model: str, api_base: str | None, api_key: str | None) -> str | None:
    """A placeholder key for a keyless local OpenAI-compatible server (litellm insists on one)."""
    if api_key or not api_base or os.environ.get("OPENAI_API_KEY"):
        return api_key
    return "EMPTY" if model.startswith(("openai/", "hosted_vllm/")) else api_key


def _check_plot_support() -> None:
    require("matplotlib", "plot", "--plot")


def _config(args: argparse.Namespace) -> EvalConfig:
    for name in ("trials", "concurrency", "max_steps", "max_errors"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_retries < 0 or args.timeout <= 0:
        raise ConfigError("--max-retries must be >= 0 and --timeout > 0")
    user = args.user or ("llm" if args.user_model else "scripted")
    if user == "scripted" and (args.user_model or args.user_api_base or args.user_api_key):
        raise ConfigError("--user-model/--user-api-base/--user-api-key need --user llm")
    if args.agent and (args.api_base or args.api_key):
        raise ConfigError("--api-base/--api-key apply to --agent-model only")
    if args.retry_errors and not args.resume:
        raise ConfigError("--retry-errors needs --resume")
    task_ids = None
    if args.task_ids is not None:
        task_ids = [t.strip() for t in args.task_ids.split(",") if t.strip()]
        if not task_ids:
            raise ConfigError(f"--task-ids: no task id in {args.task_ids!r}")
    user_llm_args: dict[str, Any] | None = None
    if user == "llm":
        from airline_gym.users import DEFAULT_USER_MODEL, USER_MODEL_ENV

        model = args.user_model or os.environ.get(USER_MODEL_ENV) or DEFAULT_USER_MODEL
        user_llm_args = {"timeout": args.timeout, "max_retries": args.max_retries}
        if args.user_api_base:
            user_llm_args["api_base"] = args.user_api_base
        key = local_api_key(model, args.user_api_base, args.user_api_key)
        if key:
            user_llm_args["api_key"] = key
    return EvalConfig(
        tasks=args.tasks,
        split=args.split,
        task_ids=task_ids,
        trials=args.trials,
        seed=args.seed,
        max_steps=args.max_steps,
        max_errors=args.max_errors,
        user=user,
        user_model=args.user_model,
        user_llm_args=user_llm_args,
        concurrency=args.concurrency,
    )


def _agent(args: argparse.Namespace) -> Any:
    """The agent name, or a factory of LiteLLMAgents (one per episode, seeded)."""
    if not args.agent_model:
        return args.agent
    from airline_gym.llm import check_credentials

    key = local_api_key(args.agent_model, args.api_base, args.api_key)
    problem = check_credentials(args.agent_model, args.api_base, key)
    if problem:
        raise AgentError(f"the LLM agent cannot run: {problem}")

    def make(seed: int) -> LiteLLMAgent:
        return LiteLLMAgent(
            args.agent_model,
            api_base=args.api_base,
            api_key=key,
            temperature=args.temperature,
            timeout=args.timeout,
            max_retries=args.max_retries,
            seed=seed,
        )

    return make


def _default_out(args: argparse.Namespace, config: EvalConfig) -> Path:
    who = args.agent_model or args.agent
    user = config.user_model if config.user == "llm" and config.user_model else config.user
    stem = f"{time.strftime('%Y%m%d-%H%M%S')}_{who}_user-{user}"
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem)
    return Path("results") / f"{safe}.json"


class _ProgressDisplay:
    """A rich progress bar on a terminal, else one plain line per finished simulation."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self._bar: Any = None
        self._task: Any = None
        self._rich = False
        if self.stream.isatty():
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeElapsedColumn,
                    TimeRemainingColumn,
                )
            except ImportError:
                return
            self._bar = Progress(
                TextColumn("eval"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
            )
            self._rich = True

    def __enter__(self) -> _ProgressDisplay:
        if self._bar is not None:
            self._bar.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, exc, tb)

    def start(self, done: int, total: int, results: Results) -> None:
        """Show the starting point (simulations already in a resumed file)."""
        status = self._status(results)
        if self._bar is not None:
            self._task = self._bar.add_task("eval", total=total, completed=done, status=status)
        elif done:
            print(f"resuming: {done}/{total} simulations already done; {status}", file=self.stream)

    @staticmethod
    def _status(results: Results) -> str:
        sims = results.simulations
        wins = sum(is_success(sim_reward(s)) for s in sims)
        return f"pass {wins}/{len(sims)} ({wins / len(sims):.0%})" if sims else "pass -"

    def update(self, sim: JSONObject, done: int, total: int, results: Results) -> None:
        """One more simulation finished."""
        status = self._status(results)
        if self._bar is not None:
            self._bar.update(self._task, completed=done, status=status)
            return
        print(
            f"[{done}/{total}] task {sim['task_id']} trial {sim['trial']}: "
            f"reward {sim_reward(sim):g} ({sim['termination_reason']}); {status}",
            file=self.stream,
            flush=True,
        )


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym eval``."""
    config = _config(args)
    if args.plot:
        _check_plot_support()
    if args.resume and not args.out:
        raise ConfigError("--resume needs --out FILE (the results file to continue)")
    agent = _agent(args)
    task_set = load_task_set(config.tasks)
    _select(task_set, config)  # unknown ids: one line, before anything runs
    if config.user == "llm":  # fail fast, before any episode, when the customer cannot run
        from airline_gym.env.airline_env import AirlineEnv

        probe = AirlineEnv(
            tasks=config.tasks,
            user="llm",
            user_model=config.user_model,
            user_llm_args=config.user_llm_args,
        )
        probe.user.check_ready()
    out = Path(args.out) if args.out else _default_out(args, config)
    if out.exists() and not args.resume:
        raise ConfigError(f"{out} exists: pass --resume to continue it, or choose another --out")
    ran = 0
    with _ProgressDisplay() as display:

        def progress(sim: JSONObject | None, done: int, total: int, results: Results) -> None:
            nonlocal ran
            if sim is None:
                display.start(done, total, results)
            else:
                ran += 1
                display.update(sim, done, total, results)

        results = evaluate(
            agent,
            config,
            out=out,
            resume=args.resume,
            retry_errors=args.retry_errors,
            progress=progress,
        )
    summary = summarize(results)
    if args.json:
        print(json.dumps({**summary, "out": str(out)}))
    else:
        print(format_summary(summary))
        if not ran:
            print("nothing to do: every simulation is already in the file")
        print(f"results: {out}")
    if args.plot:
        from airline_gym.harness.results import pass_hat_k, plot_pass_hat_k

        label = args.agent_model or args.agent
        plot_pass_hat_k({label: pass_hat_k(results)}, args.plot, title=f"pass^k on {out.name}")
        if not args.json:
            print(f"plot: {args.plot}")
    return 0
