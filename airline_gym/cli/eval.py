"""Evaluate an agent on the airline tasks and write a tau2-bench results file.

Runs every (task, trial) pair, each episode with its own env, several at a time with
--concurrency. Each finished simulation is appended to a journal beside the results file, and
the file is written once at the end, so a killed run loses at most the episodes in flight;
--resume continues it. Only one run at a time may write a results file.

An LLM agent (--agent-model) runs the leaderboard protocol by default: exactly what tau2 run
sends its llm_agent (the reference's 14 tools and no done, tool_choice auto, 3 retries, no
request timeout unless --timeout is given, one seed per trial derived from --seed as tau2's
runner derives it, shared by agent and customer). --protocol gym offers done and ends an
episode on ###STOP### in the agent's text, as tau2's gym wrapper does; it is the default for
the built-in agents. The protocol is recorded in the results file's info.

--benchmark tau3 is today's leaderboard (tau2, the default, its legacy; recorded in the info):
tau3-bench's tasks and customer guidelines, and a failed simulation re-run up to --max-retries
times, then recorded as infrastructure_error (not counted unless --count-failures-as-zero).

At the end: pass^1..pass^k, mean reward, termination reasons, tool errors and steps per
episode, and cost where reported. With the LLM customer, each simulation also carries the
customer audit (user_audit: turns that break the customer's scenario, as 'airline-gym
audit-user' finds them) and the summary counts them per kind.

The customer is the scripted one unless --user llm (or --user-model) is given; the reference
customer is an LLM (gpt-4.1). --user-cache FILE keeps the LLM customer's replies in an SQLite
file keyed by the exact request: a re-run whose dialogue reaches the same state reuses them
without calling the model (hits and misses are in the summary and the results' info).

  airline-gym eval --agent gold --out gold.json
  airline-gym eval --agent-model gpt-4.1 --user-model gpt-4.1 --trials 4 --concurrency 8 \\
      --out gpt41.json --plot gpt41.png
  airline-gym eval --agent-model openai/Qwen/Qwen2.5-7B-Instruct \\
      --api-base http://localhost:8000/v1 --user-model gpt-4.1 --out qwen.json
  airline-gym eval --agent-model gpt-4.1 --user-model gpt-4.1 --out gpt41.json --resume
  airline-gym eval --agent noop --task-ids 0,1,2 --benchmark tau3
  airline-gym eval --benchmark tau3 --agent-model MODEL --user-model gpt-5.2 \\
      --user-llm-args '{"reasoning_effort": "low"}' --trials 4 --seed 300 --out tau3.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from airline_gym.agents import BUILTIN_AGENTS, LiteLLMAgent
from airline_gym.cli.eval_out import check_out, interrupted_line
from airline_gym.cli.options import (
    add_benchmark_arguments,
    add_customer_arguments,
    add_failure_arguments,
    add_reward_basis_arguments,
    check_customer,
    grading_settings,
    local_api_key,
    server_args,
)
from airline_gym.domain.tasks import load_task_set
from airline_gym.errors import AgentError, ConfigError, require
from airline_gym.harness.evaluate import (
    DEFAULT_SEED,
    EvalConfig,
    evaluate,
    select_task_ids,
)
from airline_gym.harness.interrupt import Interrupted
from airline_gym.harness.results import (
    JSONObject,
    Results,
    format_summary,
    is_success,
    sim_reward,
    summarize,
)
from airline_gym.harness.retry import retries_per_request
from airline_gym.harness.user_audit import audit_summary, format_audit_summary
from airline_gym.progress import Progress

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym eval``."""
    agent = parser.add_argument_group("agent (one of)")
    who = agent.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", choices=BUILTIN_AGENTS, help="a built-in agent")
    who.add_argument("--agent-model", metavar="MODEL", help="litellm model of an LLM agent")
    agent.add_argument("--api-base", metavar="URL", help="OpenAI-compatible URL for the agent")
    agent.add_argument("--api-key", help="API key for the agent's model (default: from env)")
    agent.add_argument("--temperature", type=float, default=0.0, help="agent temperature (0)")
    customer = parser.add_argument_group("customer")
    add_customer_arguments(
        customer,
        "--user-",
        "scripted (offline) or llm; default llm if --user-model is given, else scripted",
        "litellm model (default gpt-4.1)",
    )
    customer.add_argument(
        "--user-cache",
        metavar="PATH",
        help="reply cache of the LLM customer (an SQLite file, created if absent): a request "
        "seen before is answered from it without calling the model",
    )
    llm = parser.add_argument_group("LLM calls (agent and customer)")
    llm.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per request (default: none, as the reference: no request is cut short)",
    )
    llm.add_argument("--max-tokens", type=int, metavar="N", help="cap on tokens per reply (both)")
    llm.add_argument(
        "--llm-args",
        type=_json_object,
        metavar="JSON",
        help="more litellm arguments for the agent, e.g. '{\"top_p\": 0.9}'",
    )
    llm.add_argument(
        "--user-llm-args", type=_json_object, metavar="JSON", help="the same for the customer"
    )
    run_ = parser.add_argument_group("run")
    add_benchmark_arguments(run_)
    run_.add_argument("--split", default="base", help="train, test or base (all; default)")
    run_.add_argument("--task-ids", metavar="IDS", help="comma-separated task ids, e.g. 1,2,3")
    run_.add_argument("--trials", type=int, default=1, help="trials per task (default 1)")
    run_.add_argument("--concurrency", type=int, default=1, help="episodes in parallel (1)")
    run_.add_argument("--seed", type=int, default=DEFAULT_SEED, help="base seed (300)")
    run_.add_argument("--max-steps", type=int, default=200, help="step budget (200)")
    run_.add_argument("--max-errors", type=int, default=10, help="tool errors allowed (10)")
    run_.add_argument(
        "--protocol",
        choices=("leaderboard", "gym"),
        help="leaderboard (tau2 run; default with --agent-model) or gym (tau2's gym wrapper, "
        "with done; default with --agent)",
    )
    add_reward_basis_arguments(parser.add_argument_group("grading (opt-in)"))
    output = parser.add_argument_group("output")
    output.add_argument("--out", metavar="FILE", help="results file (default results/<...>.json)")
    output.add_argument("--resume", action="store_true", help="continue the run in --out")
    output.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume, also rerun agent_error/user_error simulations",
    )
    add_failure_arguments(llm, output)
    output.add_argument("--plot", metavar="PNG", help="draw the pass^k curve (needs matplotlib)")
    output.add_argument("--json", action="store_true", help="print the summary as JSON")
    output.add_argument(
        "--report",
        action="store_true",
        help="at the end, write the HTML report beside the results file (.json -> .html)",
    )


def _check_plot_support() -> None:
    require("matplotlib", "plot", "--plot")


def _config(args: argparse.Namespace) -> EvalConfig:
    for name in ("trials", "concurrency", "max_steps", "max_errors"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise ConfigError("--max-tokens must be at least 1")
    if args.max_retries < 0 or (args.timeout is not None and not args.timeout > 0):
        raise ConfigError("--max-retries must be >= 0 and --timeout > 0")
    user = args.user or ("llm" if args.user_model else "scripted")
    if user == "scripted" and (args.user_model or args.user_api_base or args.user_api_key):
        raise ConfigError("--user-model/--user-api-base/--user-api-key need --user llm")
    if user == "scripted" and args.user_cache:
        raise ConfigError("--user-cache needs --user llm (the scripted customer calls no model)")
    if args.agent and (args.api_base or args.api_key):
        raise ConfigError("--api-base/--api-key apply to --agent-model only")
    if args.retry_errors and not args.resume:
        raise ConfigError("--retry-errors needs --resume")
    task_ids = None
    if args.task_ids is not None:
        task_ids = [t.strip() for t in args.task_ids.split(",") if t.strip()]
        if not task_ids:
            raise ConfigError(f"--task-ids: no task id in {args.task_ids!r}")
    protocol = args.protocol or ("leaderboard" if args.agent_model else "gym")
    request_retries = retries_per_request(args.benchmark, protocol, args.max_retries)
    user_llm_args: dict[str, Any] | None = None
    if user == "llm":
        from airline_gym.users import DEFAULT_USER_MODEL, USER_MODEL_ENV

        model = args.user_model or os.environ.get(USER_MODEL_ENV) or DEFAULT_USER_MODEL
        user_llm_args = {**_extra_llm_args(args, args.user_llm_args)}
        user_llm_args["max_retries"] = request_retries
        if args.timeout is not None:
            user_llm_args["timeout"] = args.timeout
        user_llm_args.update(server_args(model, args.user_api_base, args.user_api_key))
    return EvalConfig(
        tasks=args.tasks,
        benchmark=args.benchmark,
        simulation_retries=args.max_retries,
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
        protocol=protocol,
        user_cache=args.user_cache,
        **grading_settings(args),
    )


#: The CLI's way out when the agent's model has no key (not the Python options of a customer).
AGENT_KEY_HINT = (
    "or pass --api-base URL for a local OpenAI-compatible server, or run offline with "
    "--agent gold or --agent noop instead of --agent-model"
)


def _agent(args: argparse.Namespace, request_retries: int) -> Any:
    """The agent name, or a factory of LiteLLMAgents (one per episode, seeded)."""
    if not args.agent_model:
        return args.agent
    from airline_gym.llm import check_credentials

    key = local_api_key(args.agent_model, args.api_base, args.api_key)
    problem = check_credentials(args.agent_model, args.api_base, key, AGENT_KEY_HINT)
    if problem:
        raise AgentError(f"the LLM agent cannot run: {problem}")

    def make(seed: int) -> LiteLLMAgent:
        return LiteLLMAgent(
            args.agent_model,
            api_base=args.api_base,
            api_key=key,
            temperature=args.temperature,
            timeout=args.timeout,
            max_retries=request_retries,
            seed=seed,
            llm_args=_extra_llm_args(args, args.llm_args),
        )

    return make


def _json_object(text: str) -> dict[str, Any]:
    """An ``--*-llm-args`` value: a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _extra_llm_args(args: argparse.Namespace, given: dict[str, Any] | None) -> dict[str, Any]:
    """``--max-tokens`` plus one role's ``--*-llm-args`` (which win)."""
    extra: dict[str, Any] = {} if args.max_tokens is None else {"max_tokens": args.max_tokens}
    extra.update(given or {})
    return extra


def _default_out(args: argparse.Namespace, config: EvalConfig) -> Path:
    who = args.agent_model or args.agent
    user = config.user_model if config.user == "llm" and config.user_model else config.user
    stem = f"{time.strftime('%Y%m%d-%H%M%S')}_{who}_user-{user}"
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem)
    return Path("results") / f"{safe}.json"


class _ProgressDisplay:
    """The eval's progress: a bar with the pass tally on a terminal, else a line per simulation."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self._bar: Progress | None = None
        self._seen = self._wins = 0  # running tally: updating costs the same at 10 or 10,000

    def _status(self) -> str:
        seen, wins = self._seen, self._wins
        return f"pass {wins}/{seen} ({wins / seen:.0%})" if seen else "pass -"

    def start(self, done: int, total: int, results: Results) -> None:
        """Show the starting point (simulations already in a resumed file)."""
        self._seen = len(results.simulations)
        self._wins = sum(is_success(sim_reward(s)) for s in results.simulations)
        self._bar = Progress("eval", self.stream, total=total).__enter__()
        status = self._status()
        line = f"resuming: {done}/{total} simulations already done; {status}" if done else None
        self._bar.count(done, status, line)

    def update(self, sim: JSONObject, done: int, total: int, results: Results) -> None:
        """One more simulation finished."""
        self._seen += 1
        self._wins += is_success(sim_reward(sim))
        status = self._status()
        line = (
            f"[{done}/{total}] task {sim['task_id']} trial {sim['trial']}: "
            f"reward {sim_reward(sim):g} ({sim['termination_reason']}); {status}"
        )
        assert self._bar is not None, "start() first"
        self._bar.count(done, status, line)

    def close(self, failed: BaseException | None = None) -> None:
        """Take the bar down (after the run, or when it failed)."""
        if self._bar is not None:
            self._bar.__exit__(type(failed) if failed else None, failed, None)
            self._bar = None


def _write_report(out: Path) -> Path:
    """The run's HTML report, beside its results file (``airline-gym report``'s default)."""
    from airline_gym.cli.report import default_output
    from airline_gym.harness.report import write_report

    return write_report([out], default_output(out))


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym eval``."""
    config = _config(args)
    if args.plot:
        _check_plot_support()
    if args.resume and not args.out:
        raise ConfigError("--resume needs --out FILE (the results file to continue)")
    agent = _agent(args, retries_per_request(args.benchmark, config.protocol, args.max_retries))
    task_set = load_task_set(config.task_set_name)
    select_task_ids(task_set, config)  # unknown ids: one line, before anything runs
    if config.user == "llm":  # fail fast, before any episode, when the customer cannot run
        from airline_gym.env.airline_env import AirlineEnv

        probe = AirlineEnv(
            tasks=config.tasks,
            benchmark=config.benchmark,
            user="llm",
            user_model=config.user_model,
            user_llm_args=config.user_llm_args,
        )
        check_customer(probe.user, "--user-api-base")
    out = Path(args.out) if args.out else _default_out(args, config)
    check_out(out, args.resume)
    ran = 0
    display = _ProgressDisplay()

    def progress(sim: JSONObject | None, done: int, total: int, results: Results) -> None:
        nonlocal ran
        if sim is None:
            display.start(done, total, results)
        else:
            ran += 1
            display.update(sim, done, total, results)

    try:
        results = evaluate(
            agent,
            config,
            out=out,
            resume=args.resume,
            retry_errors=args.retry_errors,
            progress=progress,
        )
    except Interrupted as stop:
        display.close(stop)
        print(interrupted_line(stop), file=sys.stderr)
        return 130
    except BaseException as exc:
        display.close(exc)
        raise
    display.close()
    summary = summarize(results, args.count_failures_as_zero)
    customer_audit = audit_summary(results.simulations)
    if customer_audit is not None:
        summary["user_audit"] = customer_audit
    report = _write_report(out) if args.report else None
    if args.json:
        print(
            json.dumps({**summary, "out": str(out), **({"report": str(report)} if report else {})})
        )
    else:
        print(format_summary(summary))
        if customer_audit is not None:
            print(format_audit_summary(customer_audit))
        if not ran:
            print("nothing to do: every simulation is already in the file")
        print(f"results: {out}")
        if report:
            print(f"report: {report}")
    if args.plot:
        from airline_gym.harness.results import pass_hat_k, plot_pass_hat_k

        label = args.agent_model or args.agent
        plot_pass_hat_k({label: pass_hat_k(results)}, args.plot, title=f"pass^k on {out.name}")
        if not args.json:
            print(f"plot: {args.plot}")
    return 0
