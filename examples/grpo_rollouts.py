"""One GRPO/RLOO rollout step: G rollouts per task, group-relative advantages, JSONL export.

This is what a group-based RL trainer runs at every step, with the policy served by any
OpenAI-compatible endpoint (vLLM, SGLang, Ollama, a hosted API; called through litellm):

1. pick a batch of tasks (``--task-ids 17,18`` or ``--split train --batch 4``);
2. play ``--group-size`` episodes of each task concurrently (``airline_gym.harness.runner``), each
   rollout with its own seed, which also goes to the policy's sampler;
3. turn the terminal rewards into group-relative advantages (``--advantage grpo``:
   ``(r - mean) / (std + 1e-4)``; ``rloo``: ``r - mean of the others``);
4. write the trajectories with their advantages as JSONL (``--out``), one OpenAI-format
   conversation per line: ready for a policy-gradient update or for SFT on the winners.

Examples::

    # a local vLLM server, the offline scripted customer
    python examples/grpo_rollouts.py --model openai/Qwen/Qwen3-8B \\
        --api-base http://localhost:8000/v1 --split train --batch 4 --group-size 8

    # tau3 (today's leaderboard: its tasks and customer guidelines; tau2 is the default)
    python examples/grpo_rollouts.py --model openai/policy --api-base http://localhost:8000/v1 \\
        --benchmark tau3 --split train --batch 4

    # an LLM customer served by another endpoint, RLOO advantages
    python examples/grpo_rollouts.py --model openai/policy --api-base http://localhost:8000/v1 \\
        --task-ids 17,18 --user llm --user-model openai/user \\
        --user-api-base http://localhost:8001/v1 --advantage rloo --out step_0001.jsonl

An episode whose policy call fails for good (after retries) is kept with reward 0 and
termination reason ``agent_error``; the summary counts them and names the commonest cause
(e.g. a connection refused). When no rollout succeeds, nothing is written and the exit
status is 1.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from airline_gym.agents import LiteLLMAgent
from airline_gym.cli.options import OneLineParser, add_benchmark_arguments
from airline_gym.domain.benchmarks import benchmark_tasks
from airline_gym.domain.tasks import load_task_set
from airline_gym.env import AirlineEnv
from airline_gym.errors import AirlineGymError
from airline_gym.harness.export import group_advantages, write_jsonl
from airline_gym.harness.runner import EpisodeResult, arun_episode, arun_pool


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = OneLineParser(  # a bad argument: one line, exit 2
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    p.add_argument("--model", required=True, help="litellm model of the policy, e.g. openai/<name>")
    p.add_argument("--api-base", help="the policy's OpenAI-compatible endpoint")
    p.add_argument("--api-key", help="the policy's API key (default: from the environment)")
    p.add_argument("--temperature", type=float, default=1.0, help="policy sampling temperature")
    p.add_argument("--max-tokens", type=int, help="cap on tokens per policy reply")
    p.add_argument(
        "--timeout", type=float, help="seconds per LLM request, policy and customer (default: none)"
    )
    p.add_argument("--task-ids", help="comma-separated task ids, e.g. 17,18")
    p.add_argument("--split", default="train", help="train, test or base (without --task-ids)")
    p.add_argument("--batch", type=int, default=4, help="tasks drawn from --split per step")
    add_benchmark_arguments(p)  # --benchmark tau2|tau3 (default tau2), --tasks PATH
    p.add_argument("--group-size", type=int, default=4, help="rollouts per task (G)")
    p.add_argument("--advantage", choices=("grpo", "rloo"), default="grpo")
    p.add_argument("--user", choices=("scripted", "llm"), default="scripted", help="the customer")
    p.add_argument("--user-model", help="litellm model of the LLM customer (default gpt-4.1)")
    p.add_argument("--user-api-base", help="the LLM customer's OpenAI-compatible endpoint")
    p.add_argument("--user-api-key", help="the LLM customer's API key")
    p.add_argument("--max-steps", type=int, default=200, help="step budget per episode")
    p.add_argument("--concurrency", type=int, default=32, help="episodes in flight at once")
    p.add_argument("--seed", type=int, default=0, help="draws the batch; rollout seeds follow it")
    p.add_argument("--out", default="rollouts.jsonl", help="JSONL file for the trajectories")
    args = p.parse_args(argv)
    if args.group_size < 1 or args.batch < 1 or args.concurrency < 1:
        p.error("--group-size, --batch and --concurrency must be at least 1")
    return args


def pick_tasks(args: argparse.Namespace) -> list[str]:
    """The batch: ``--task-ids`` as given, else ``--batch`` distinct tasks of ``--split``."""
    task_set = load_task_set(benchmark_tasks(args.tasks, args.benchmark))
    if args.task_ids:
        ids = [task_set[t.strip()].id for t in args.task_ids.split(",") if t.strip()]
        return list(dict.fromkeys(ids))  # one group per task
    ids = [t.id for t in task_set.split(args.split)]
    return random.Random(args.seed).sample(ids, min(args.batch, len(ids)))


def env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Plain-data AirlineEnv arguments for the chosen customer."""
    kwargs: dict[str, Any] = {
        "benchmark": args.benchmark,
        "tasks": args.tasks,
        "user": args.user,
        "max_steps": args.max_steps,
    }
    if args.user == "llm":
        llm_args = {
            "api_base": args.user_api_base,
            "api_key": args.user_api_key,
            "timeout": args.timeout,
        }
        kwargs["user_model"] = args.user_model
        kwargs["user_llm_args"] = {k: v for k, v in llm_args.items() if v is not None}
    return kwargs


def make_policy(args: argparse.Namespace) -> Callable[[int], LiteLLMAgent]:
    """A factory of policy agents; each rollout's seed goes to the sampler."""
    api_key = args.api_key  # none: the LLM client's own fallback (a local server needs none)
    llm_args = {"max_tokens": args.max_tokens} if args.max_tokens else None

    def make(seed: int) -> LiteLLMAgent:
        return LiteLLMAgent(
            args.model,
            api_base=args.api_base,
            api_key=api_key,
            temperature=args.temperature,
            timeout=args.timeout,
            llm_args=llm_args,
            seed=seed,
        )

    return make


async def collect(
    jobs: Sequence[tuple[str, int]],
    make_env: Callable[[], AirlineEnv],
    make_agent: Callable[[int], Any],
    concurrency: int,
) -> list[EpisodeResult]:
    """Play ``(task_id, seed)`` jobs concurrently (an agent seeded per job); results in job order.

    The harness's episode loop ends an episode whose policy fails as ``agent_error`` (reward 0,
    the cause in ``error``), so one bad request never stops the batch.
    """

    async def play(env: AirlineEnv, job: tuple[str, int]) -> EpisodeResult:
        task_id, seed = job
        return await arun_episode(env, make_agent(seed), task_id, seed)

    return await arun_pool(make_env, jobs, play, concurrency)


def summary(tasks: Sequence[str], results: Sequence[EpisodeResult], adv: Sequence[float]) -> str:
    """One line per task: rewards, mean and advantages of its group; then totals."""
    lines = []
    for task in tasks:
        idx = [i for i, r in enumerate(results) if r.task_id == task]
        rewards = [results[i].reward for i in idx]
        failed = sum(results[i].termination_reason == "agent_error" for i in idx)
        lines.append(
            f"task {task:>3}: rewards {' '.join(f'{r:g}' for r in rewards)}"
            f" | mean {statistics.fmean(rewards):.2f}"
            f" | advantages {' '.join(f'{adv[i]:+.2f}' for i in idx)}"
            + (f" | {failed} agent errors" if failed else "")
        )
    mean = statistics.fmean(r.reward for r in results)
    lines.append(f"{len(results)} rollouts over {len(tasks)} tasks, mean reward {mean:.3f}")
    return "\n".join(lines)


FAILED_ENDINGS = ("agent_error", "user_error")


def report_failures(results: Sequence[EpisodeResult]) -> bool:
    """Name the commonest cause of failed rollouts on stderr; False when none succeeded."""
    failed = [r for r in results if r.termination_reason in FAILED_ENDINGS]
    if failed:
        cause, count = Counter(r.error or r.termination_reason for r in failed).most_common(1)[0]
        print(
            f"warning: {len(failed)} of {len(results)} rollouts failed ({count} with: {cause})",
            file=sys.stderr,
        )
    return len(failed) < len(results)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one rollout step; returns the exit status."""
    args = parse_args(argv)
    try:  # bad input, or credentials missing: one line before any request
        tasks = pick_tasks(args)
        make_agent = make_policy(args)
        kwargs = env_kwargs(args)
        make_agent(0).check_ready()
        AirlineEnv(**kwargs).user.check_ready()
    except AirlineGymError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    g = args.group_size
    jobs = [(task, args.seed + i * g + j) for i, task in enumerate(tasks) for j in range(g)]
    results = asyncio.run(collect(jobs, lambda: AirlineEnv(**kwargs), make_agent, args.concurrency))
    if not report_failures(results):
        print(f"error: no rollout succeeded; nothing written to {args.out}", file=sys.stderr)
        return 1
    advantages = group_advantages(
        [r.reward for r in results], [r.task_id for r in results], args.advantage
    )
    write_jsonl(results, args.out, advantages=advantages, group_ids=[r.task_id for r in results])
    print(summary(tasks, results, advantages))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
