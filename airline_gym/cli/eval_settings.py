"""``airline-gym eval``'s arguments turned into what runs: the run's config, the agent, the
default results file name."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from airline_gym.cli.flags import (
    AGENT_KEY_HINT,
    check_model_credentials,
    customer_kind,
    refuse_agent_server,
    task_ids,
)
from airline_gym.cli.options import grading_settings, local_api_key, server_args
from airline_gym.errors import ConfigError
from airline_gym.harness.evaluate import EvalConfig
from airline_gym.harness.retry import retries_per_request
from airline_gym.numbers import check_finite, finite_number

__all__ = ["AGENT_KEY_HINT", "default_out", "eval_agent", "eval_config"]


def eval_config(args: argparse.Namespace) -> EvalConfig:
    """The run ``args`` ask for (one-line ``ConfigError`` for impossible settings)."""
    for name in ("trials", "concurrency", "max_steps", "max_errors"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise ConfigError("--max-tokens must be at least 1")
    if args.max_retries < 0 or (args.timeout is not None and not args.timeout > 0):
        raise ConfigError("--max-retries must be >= 0 and --timeout > 0")
    if args.timeout is not None:
        finite_number("--timeout", args.timeout)
    finite_number("--temperature", args.temperature)
    check_finite("--llm-args", args.llm_args)
    check_finite("--user-llm-args", args.user_llm_args)
    user = customer_kind(args)
    if user == "scripted" and args.user_cache:
        raise ConfigError("--user-cache needs --user llm (the scripted customer calls no model)")
    if args.agent:
        refuse_agent_server(args, "they apply to --agent-model only")
    if args.retry_errors and not args.resume:
        raise ConfigError("--retry-errors needs --resume")
    ids = task_ids(args.task_ids)
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
        task_ids=ids,
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


def eval_agent(args: argparse.Namespace, request_retries: int) -> Any:
    """The agent name, or a factory of LiteLLMAgents (one per episode, seeded)."""
    if not args.agent_model:
        return args.agent
    key = local_api_key(args.agent_model, args.agent_api_base, args.agent_api_key)
    check_model_credentials("LLM agent", args.agent_model, args.agent_api_base, key, AGENT_KEY_HINT)
    from airline_gym.agents import LiteLLMAgent

    def make(seed: int) -> Any:
        return LiteLLMAgent(
            args.agent_model,
            api_base=args.agent_api_base,
            api_key=key,
            temperature=args.temperature,
            timeout=args.timeout,
            max_retries=request_retries,
            seed=seed,
            llm_args=_extra_llm_args(args, args.llm_args),
        )

    return make


def _extra_llm_args(args: argparse.Namespace, given: dict[str, Any] | None) -> dict[str, Any]:
    """``--max-tokens`` plus one role's ``--*-llm-args`` (which win)."""
    extra: dict[str, Any] = {} if args.max_tokens is None else {"max_tokens": args.max_tokens}
    extra.update(given or {})
    return extra


def default_out(args: argparse.Namespace, config: EvalConfig) -> Path:
    """``results/<time>_<agent>_user-<customer>.json``."""
    who = args.agent_model or args.agent
    user = config.user_model if config.user == "llm" and config.user_model else config.user
    stem = f"{time.strftime('%Y%m%d-%H%M%S')}_{who}_user-{user}"
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem)
    return Path("results") / f"{safe}.json"
