"""Compare two results files task by task: the success rate in each and what flipped.

Success is reward 1. A task whose success rate went up from A to B is "improved", down is
"regressed" (with one trial per task, exactly the tasks that flipped). The last lines give each
file's pass^k and mean reward.

  airline-gym compare before.json after.json
  airline-gym compare before.json after.json --changed
  airline-gym compare before.json after.json --json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from airline_gym.cli.formatting import format_table
from airline_gym.errors import MissingFileError
from airline_gym.harness.results import Results, compare


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym compare``."""
    parser.add_argument("a", metavar="A.json", help="the baseline results file")
    parser.add_argument("b", metavar="B.json", help="the results file compared with it")
    parser.add_argument("--changed", action="store_true", help="only tasks whose rate changed")
    parser.add_argument("--json", action="store_true", help="the comparison as one JSON object")


def _tally(value: tuple[int, int] | None) -> str:
    return "-" if value is None else f"{value[0]}/{value[1]}"


def _pass(values: dict[int, float]) -> str:
    return "  ".join(f"pass^{k} {v:.3f}" for k, v in values.items()) or "no simulations"


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym compare``."""
    missing = [p for p in (args.a, args.b) if not Path(p).is_file()]
    if missing:
        raise MissingFileError(f"no such file: {', '.join(missing)}")
    result = compare(Results.load(args.a), Results.load(args.b))
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, **result.to_dict()}))
        return 0
    rows = [
        (t.task_id, _tally(t.a), _tally(t.b), "" if t.change == "same" else t.change)
        for t in result.tasks
        if not args.changed or t.change != "same"
    ]
    print(f"A: {args.a}\nB: {args.b}\n")
    print(format_table(("task", "A", "B", "change"), rows))
    print()
    for label, values, mean in (
        ("A", result.pass_hat_k_a, result.mean_reward_a),
        ("B", result.pass_hat_k_b, result.mean_reward_b),
    ):
        shown = "-" if mean is None else f"{mean:.3f}"
        print(f"{label}: {_pass(values)}  mean reward {shown}")
    print(f"improved ({len(result.improved)}): {', '.join(result.improved) or '-'}")
    print(f"regressed ({len(result.regressed)}): {', '.join(result.regressed) or '-'}")
    return 0
