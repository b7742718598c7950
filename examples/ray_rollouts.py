"""Collect airline rollouts on a Ray cluster and write them as JSONL.

Each Ray actor holds its own envs and plays ``(task, seed)`` jobs concurrently, taking the
next job whenever one of its ``--concurrency`` slots frees up (a slow episode holds one slot).
The policy is either the tasks' gold actions (``--agent gold``, a smoke test of the cluster) or
an LLM behind any OpenAI-compatible endpoint (``--agent llm --model openai/<name> --api-base
...``); the customer is scripted (offline) or an LLM (``--user llm``).

Examples::

    # a local Ray instance, gold actions on every train task, 2 seeds each
    python examples/ray_rollouts.py --split train --seeds 2 --num-workers 4

    # the same on tau3 (today's leaderboard: its tasks and customer guidelines)
    python examples/ray_rollouts.py --benchmark tau3 --split train --seeds 2

    # join the running cluster of this machine; a vLLM policy; an LLM customer
    python examples/ray_rollouts.py --address auto --num-workers 16 --agent llm \\
        --model openai/Qwen/Qwen3-8B --api-base http://head-node:8000/v1 \\
        --user llm --user-model openai/user --user-api-base http://head-node:8001/v1
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from airline_gym.agents import GoldAgent, LiteLLMAgent
from airline_gym.cli.options import OneLineParser, add_benchmark_arguments
from airline_gym.domain.benchmarks import benchmark_tasks
from airline_gym.domain.tasks import load_task_set
from airline_gym.errors import AirlineGymError
from airline_gym.harness.export import write_jsonl
from airline_gym.integrations.ray_rollouts import collect


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = OneLineParser(  # a bad argument: one line, exit 2
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    p.add_argument("--address", help='Ray address: none = local, "auto", or "ray://host:10001"')
    p.add_argument("--num-workers", type=int, default=2, help="rollout actors")
    p.add_argument("--concurrency", type=int, default=32, help="episodes in flight per actor")
    p.add_argument(
        "--chunk-size", type=int, default=1, help="jobs a slot takes at once (more: less overhead)"
    )
    p.add_argument("--task-ids", help="comma-separated task ids (default: every task of --split)")
    add_benchmark_arguments(p)  # --benchmark tau2|tau3 (default tau2), --tasks PATH
    p.add_argument("--split", default="train", help="train, test or base")
    p.add_argument("--seeds", type=int, default=1, help="episodes per task, seeds 0..N-1")
    p.add_argument("--agent", choices=("gold", "llm"), default="gold")
    p.add_argument("--model", help="litellm model of the LLM agent, e.g. openai/<name>")
    p.add_argument("--api-base", help="the LLM agent's OpenAI-compatible endpoint")
    p.add_argument("--api-key", help="the LLM agent's API key (default: $OPENAI_API_KEY)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--user", choices=("scripted", "llm"), default="scripted", help="the customer")
    p.add_argument("--user-model", help="litellm model of the LLM customer (default gpt-4.1)")
    p.add_argument("--user-api-base", help="the LLM customer's OpenAI-compatible endpoint")
    p.add_argument("--user-api-key", help="the LLM customer's API key")
    p.add_argument("--out", default="ray_rollouts.jsonl", help="JSONL file for the trajectories")
    args = p.parse_args(argv)
    if args.agent == "llm" and not args.model:
        p.error("--agent llm needs --model")
    return args


def build(args: argparse.Namespace) -> tuple[list[tuple[str, int]], dict[str, Any], Any]:
    """The jobs, the plain-data env kwargs and the picklable agent factory."""
    task_set = load_task_set(benchmark_tasks(args.tasks, args.benchmark))
    if args.task_ids:
        ids = [task_set[t.strip()].id for t in args.task_ids.split(",") if t.strip()]
    else:
        ids = [t.id for t in task_set.split(args.split)]
    jobs = [(task, seed) for task in ids for seed in range(args.seeds)]
    env_kwargs: dict[str, Any] = {
        "benchmark": args.benchmark,
        "tasks": args.tasks,
        "user": args.user,
    }
    if args.user == "llm":
        llm_args = {"api_base": args.user_api_base, "api_key": args.user_api_key}
        env_kwargs["user_model"] = args.user_model
        env_kwargs["user_llm_args"] = {k: v for k, v in llm_args.items() if v is not None}
    if args.agent == "gold":
        return jobs, env_kwargs, GoldAgent
    api_key = (
        args.api_key or os.environ.get("OPENAI_API_KEY") or ("EMPTY" if args.api_base else None)
    )
    agent = functools.partial(
        LiteLLMAgent,
        args.model,
        api_base=args.api_base,
        api_key=api_key,
        temperature=args.temperature,
    )
    return jobs, env_kwargs, agent


def main(argv: Sequence[str] | None = None) -> int:
    """Collect the rollouts, write them, print a summary; returns the exit status."""
    args = parse_args(argv)
    start = time.perf_counter()
    try:  # bad input, or no Ray cluster at --address: one line, no traceback
        jobs, env_kwargs, agent = build(args)
        results = collect(
            jobs,
            address=args.address,
            num_workers=args.num_workers,
            env_kwargs=env_kwargs,
            agent=agent,
            concurrency=args.concurrency,
            chunk_size=args.chunk_size,
        )
    except (AirlineGymError, ConnectionError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    write_jsonl(results, args.out)
    reasons: dict[str, int] = {}
    for r in results:
        reasons[r.termination_reason] = reasons.get(r.termination_reason, 0) + 1
    print(
        f"{len(results)} episodes, {args.num_workers} Ray worker(s), {elapsed:.1f} s: "
        f"mean reward {statistics.fmean(r.reward for r in results):.3f}; "
        + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
