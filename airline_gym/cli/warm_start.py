"""Write SFT warm-start data: the gold agent's conversations with the scripted customer, as JSONL.

Plays a gold agent against the offline scripted customer on every selected task (a task that
carries an intent, such as a generated one, gets the customer that plays it: it says no to what
it did not ask for, pushes back, accepts refusals) and writes each episode that scores at least
--min-reward as one JSON line: 'messages' (system prompt first, then the conversation with its
tool calls and results, in OpenAI chat format) and 'tools' (the schemas the agent was offered),
plus task_id and reward. 'datasets' loads the file with load_dataset("json", ...) and TRL's
SFTTrainer takes it as a conversational dataset with tools.

--agent gold-dialogue (default) asks for a yes before each write, refuses what the policy
refuses and answers in words, as the policy wants an agent to; --agent gold only replays the
calls. A task with no intent, no write and nothing to say is not played (its dialogue would
ignore the request). --protocol names what the rows teach, as eval --protocol runs it (same
system prompt and tools): leaderboard (default) offers the reference's 14 tools (what an LLM
agent is evaluated with); gym adds 'done'; tool-reply (TRL's GRPOTrainer) talks to the customer
through respond_to_user and ends with done. Progress goes to stderr; the file replaces --out
only once it is whole. Exit code 0, 1 when no episode reached --min-reward (--out is left as it
was), 2 on bad arguments, 130 on Ctrl-C (it stops within about a second, nothing written).

  airline-gym warm-start --tasks train.json --out sft.jsonl
  airline-gym warm-start --split train --out sft-benchmark-train.jsonl
"""

from __future__ import annotations

import argparse
import math
import sys

from airline_gym.cli.flags import add_task_ids_argument, task_ids
from airline_gym.cli.options import add_benchmark_arguments
from airline_gym.numbers import whole_number
from airline_gym.printable import printable
from airline_gym.progress import Progress

__all__ = ["add_arguments", "run"]


def _reward(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1: {text!r}")
    return value


def _count(text: str) -> int:
    count = whole_number(text)
    if count is None or not 1 <= count <= 256:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 256: {text[:40]!r}")
    return count


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym warm-start``."""
    from airline_gym.env.protocols import PROTOCOLS
    from airline_gym.harness.warm_start import WARM_START_AGENTS

    parser.add_argument("--out", required=True, metavar="FILE", help="the JSONL file to write")
    add_benchmark_arguments(parser)
    parser.add_argument("--split", default="base", help="train, test or base (all; default)")
    add_task_ids_argument(parser)
    parser.add_argument(
        "--agent", choices=WARM_START_AGENTS, default="gold-dialogue", help="(gold-dialogue)"
    )
    parser.add_argument(
        "--protocol", choices=PROTOCOLS, default="leaderboard", help="(leaderboard)"
    )
    parser.add_argument(
        "--min-reward", type=_reward, default=1.0, help="keep episodes scoring at least this (1)"
    )
    parser.add_argument("--concurrency", type=_count, default=4, help="episodes at once (4)")


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym warm-start``."""
    from airline_gym.harness.warm_start import WarmStartInterrupted, warm_start

    ids = task_ids(args.task_ids)
    try:
        with Progress("playing", total=1) as progress:

            def played(count: int, total: int) -> None:
                progress.total = total
                step = max(1, total // 10)  # a plain stream gets about ten lines
                line = f"played {count:,} of {total:,}" if count % step == 0 else None
                progress.count(count, "", line)

            done = warm_start(
                args.out,
                tasks=args.tasks,
                benchmark=args.benchmark,
                split=args.split,
                task_ids=ids,
                agent=args.agent,
                protocol=args.protocol,
                min_reward=args.min_reward,
                concurrency=args.concurrency,
                progress=played,
            )
    except WarmStartInterrupted as stop:
        print(
            f"interrupted after {stop.played} of {stop.total} episodes: nothing written "
            f"({args.out} left as it was)",
            file=sys.stderr,
        )
        return 130
    if done.written:
        print(f"wrote {done.written} of {done.played} conversations to {args.out}")
    else:
        print(
            f"wrote nothing: none of {done.played} conversations reached --min-reward "
            f"{args.min_reward:g} ({args.out} left as it was)"
        )
    if done.skipped:
        shown = ", ".join(map(printable, done.skipped[:10]))
        shown += " ..." if len(done.skipped) > 10 else ""
        print(
            f"not played ({len(done.skipped)}: no intent, no write, nothing to say, so the "
            f"dialogue would only ignore the request): {shown}"
        )
    if done.dropped:
        print(f"left out ({len(done.dropped)}, reward below {args.min_reward:g}):")
        for task_id, reward in done.dropped.items():  # every one, with why
            print(f"  {printable(task_id)} ({reward:g}): {printable(done.why.get(task_id, ''))}")
    return 0 if done.written else 1
