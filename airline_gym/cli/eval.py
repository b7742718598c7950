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

Your own agent: --agent package.module:factory imports the module (from the current folder,
$PYTHONPATH or installed packages) and calls the factory once per episode, with the keyword
arguments it accepts of seed (the episode's seed) and task_set (the run's TaskSet); it returns
an object with reset(info) and act(observation, info). A bad factory name is one line, exit 2.

tau2 run's flag names are accepted too: --agent-llm, --user-llm, --num-trials,
--max-concurrency, --save-to, --task-ids (space- or comma-separated), --task-split-name,
--agent-llm-args, --judge-llm. --api-base/--api-key are --agent-api-base/--agent-api-key.

  airline-gym eval --agent gold --out gold.json
  airline-gym eval --agent my_agents:make_agent --task-ids 0 1 2 --out mine.json
  airline-gym eval --agent-model gpt-4.1 --user-model gpt-4.1 --trials 4 --concurrency 8 \\
      --out gpt41.json --plot gpt41.png
  airline-gym eval --agent-model openai/Qwen/Qwen2.5-7B-Instruct \\
      --agent-api-base http://localhost:8000/v1 --user-model gpt-4.1 --out qwen.json
  airline-gym eval --agent-model gpt-4.1 --user-model gpt-4.1 --out gpt41.json --resume
  airline-gym eval --agent noop --task-ids 0,1,2 --benchmark tau3
  airline-gym eval --benchmark tau3 --agent-model MODEL --user-model gpt-5.2 \\
      --user-llm-args '{"reasoning_effort": "low"}' --trials 4 --seed 300 --out tau3.json

Exit code: 0 when the run finished; 1 when it failed: its failed simulations (agent_error,
user_error, infrastructure_error: a model or server that did not answer, or a failed NL judge)
reached --max-failures N (default: every simulation; with N given, no more are started once
N failed, and --resume --retry-errors continues), or every simulation failed (whatever
--max-failures), or the --report page could not be written;
said in one line, the results file saved all the same; 2 on bad input (one line, nothing run);
130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from airline_gym.cli.custom_agent import custom_agent_factory, is_custom_agent
from airline_gym.cli.eval_args import add_arguments
from airline_gym.cli.eval_failures import failed_run_line, stopped_early_line
from airline_gym.cli.eval_out import (
    check_out,
    check_plot,
    check_report_page,
    interrupted_line,
    write_page,
)
from airline_gym.cli.eval_progress import ProgressDisplay as _ProgressDisplay
from airline_gym.cli.eval_settings import AGENT_KEY_HINT, default_out, eval_agent, eval_config
from airline_gym.cli.flags import check_customer
from airline_gym.domain.tasks import load_task_set
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import evaluate, select_task_ids
from airline_gym.harness.failures import FailureLimitReached
from airline_gym.harness.interrupt import Interrupted
from airline_gym.harness.results import JSONObject, Results, format_summary, summarize
from airline_gym.harness.retry import retries_per_request
from airline_gym.harness.user_audit import audit_summary, format_audit_summary
from airline_gym.printable import printable

__all__ = ["AGENT_KEY_HINT", "add_arguments", "run"]


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym eval``."""
    config = eval_config(args)
    if args.plot:
        check_plot(Path(args.plot))
    if args.resume and not args.out:
        raise ConfigError("--resume needs --out FILE (the results file to continue)")
    agent = eval_agent(args, retries_per_request(args.benchmark, config.protocol, args.max_retries))
    task_set = load_task_set(config.task_set_name)
    select_task_ids(task_set, config)  # unknown ids: one line, before anything runs
    if isinstance(agent, str) and is_custom_agent(agent):  # --agent package.module:factory
        agent = custom_agent_factory(agent, task_set, config.seed)
    if config.user == "llm":  # fail fast, before any episode, when the customer cannot run
        from airline_gym.env.airline_env import AirlineEnv

        probe = AirlineEnv(
            tasks=config.tasks,
            benchmark=config.benchmark,
            user="llm",
            user_model=config.user_model,
            user_llm_args=config.user_llm_args,
        )
        check_customer(probe.user)
    out = Path(args.out) if args.out else default_out(args, config)
    check_out(out, args.resume)
    if args.report:
        check_report_page(out)
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
            max_failures=getattr(args, "max_failures", None),
        )
    except Interrupted as stop:
        display.close(stop)
        print(interrupted_line(stop), file=sys.stderr)
        return 130
    except FailureLimitReached as stop:
        display.close(stop)
        print(f"airline-gym eval: error: {printable(stopped_early_line(stop))}", file=sys.stderr)
        return 1
    except BaseException as exc:
        display.close(exc)
        raise
    display.close()
    summary = summarize(results, args.count_failures_as_zero)
    customer_audit = audit_summary(results.simulations)
    if customer_audit is not None:
        summary["user_audit"] = customer_audit
    report = write_page(out) if args.report else None
    if args.json:
        print(
            json.dumps({**summary, "out": str(out), **({"report": str(report)} if report else {})})
        )
    else:
        print(printable(format_summary(summary), lines=True))
        if customer_audit is not None:
            print(printable(format_audit_summary(customer_audit), lines=True))
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
    failed = failed_run_line(results.simulations, getattr(args, "max_failures", None), out)
    if failed:
        sys.stdout.flush()
        print(f"airline-gym eval: error: {printable(failed)}", file=sys.stderr)
        return 1
    return 1 if args.report and report is None else 0
