"""The command-line options of ``airline-gym eval`` (their meaning: ``eval --help``)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from airline_gym.agents import BUILTIN_AGENTS
from airline_gym.cli.eval_failures import positive_count
from airline_gym.cli.flags import (
    AGENT_MODEL_HELP,
    add_agent_server_arguments,
    add_customer_arguments,
    add_task_ids_argument,
)
from airline_gym.cli.options import (
    add_benchmark_arguments,
    add_failure_arguments,
    add_reward_basis_arguments,
)
from airline_gym.env.protocols import PROTOCOLS
from airline_gym.harness.evaluate import DEFAULT_SEED

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym eval``."""
    agent = parser.add_argument_group("agent (one of)")
    who = agent.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--agent",
        metavar="NAME",
        help=f"a built-in agent ({', '.join(BUILTIN_AGENTS)}) or your own as "
        "package.module:factory (see below)",
    )
    who.add_argument(
        "--agent-model", "--agent-llm", dest="agent_model", metavar="MODEL",
        help=AGENT_MODEL_HELP,
    )  # fmt: skip
    add_agent_server_arguments(agent)
    agent.add_argument("--temperature", type=float, default=0.0, help="agent temperature (0)")
    customer = parser.add_argument_group("customer")
    add_customer_arguments(customer)
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
        "--agent-llm-args",
        "--llm-args",
        dest="llm_args",
        type=_json_object,
        metavar="JSON",
        help="more litellm arguments for the agent, e.g. '{\"top_p\": 0.9}'",
    )
    llm.add_argument(
        "--user-llm-args", type=_json_object, metavar="JSON", help="the same for the customer"
    )
    run_ = parser.add_argument_group("run")
    add_benchmark_arguments(run_)
    run_.add_argument(
        "--split", "--task-split-name", dest="split", default="base",
        help="train, test or base (all; default)",
    )  # fmt: skip
    add_task_ids_argument(run_)
    run_.add_argument(
        "--trials", "--num-trials", dest="trials", type=int, default=1,
        help="trials per task (default 1)",
    )  # fmt: skip
    run_.add_argument(
        "--concurrency", "--max-concurrency", dest="concurrency", type=int, default=1,
        help="episodes in parallel (1)",
    )  # fmt: skip
    run_.add_argument("--seed", type=int, default=DEFAULT_SEED, help="base seed (300)")
    run_.add_argument("--max-steps", type=int, default=200, help="step budget (200)")
    run_.add_argument("--max-errors", type=int, default=10, help="tool errors allowed (10)")
    run_.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        help="leaderboard (tau2 run; default with --agent-model; the only one comparable with "
        "the leaderboard), gym (tau2's gym wrapper, with done; default with --agent) or "
        "tool-reply (TRL's: the customer through respond_to_user, then done)",
    )
    add_reward_basis_arguments(parser.add_argument_group("grading (opt-in)"))
    output = parser.add_argument_group("output")
    output.add_argument(
        "--out", "--save-to", dest="out", metavar="FILE",
        help="results file (default results/<...>.json)",
    )  # fmt: skip
    output.add_argument("--resume", action="store_true", help="continue the run in --out")
    output.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume, also rerun agent_error/user_error simulations",
    )
    add_failure_arguments(llm, output)
    output.add_argument(
        "--max-failures",
        type=positive_count,
        metavar="N",
        help="the run fails (exit 1) when N simulations failed on infrastructure (agent_error, "
        "user_error, infrastructure_error or a failed NL judge), and starts no more once N "
        "failed (--resume --retry-errors continues); default: all of them",
    )
    output.add_argument("--plot", metavar="PNG", help="draw the pass^k curve (needs matplotlib)")
    output.add_argument("--json", action="store_true", help="print the summary as JSON")
    output.add_argument(
        "--report",
        action="store_true",
        help="at the end, write the HTML report beside the results file (.json -> .html)",
    )


def _json_object(text: str) -> dict[str, Any]:
    """An ``--*-llm-args`` value: a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {type(value).__name__}")
    return value
