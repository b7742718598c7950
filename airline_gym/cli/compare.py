"""Compare two results files: is B better than A, or is the difference within noise?

First, what differs besides the agent: the task set (ids, or the tasks' content: tau2 vs tau3),
the benchmark, the reward basis, the customer (scripted or LLM, and its model) and the protocol
(gym or leaderboard). Any such difference is refused (exit 2, one line each) unless
--allow-different is given.

Then the tasks one by one: success is reward 1; a task whose success rate went up from A to B is
"improved", down is "regressed" (with one trial per task, exactly the tasks that flipped); each
file's pass^k and mean reward. Last, B - A in pass^1 (and pass^k where both runs have k trials)
over the tasks both ran, with a 95% interval (paired bootstrap over those tasks, seeded), and a
verdict on pass^1: "B is better" or "A is better" when the interval excludes 0, else "within
noise". Works on airline-gym's, tau2 run's and leaderboard results files.

  airline-gym compare before.json after.json
  airline-gym compare before.json after.json --changed
  airline-gym compare before.json after.json --json
  airline-gym compare tau2-run.json tau3-run.json --allow-different
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from airline_gym.cli.formatting import format_table
from airline_gym.errors import MissingFileError
from airline_gym.harness.results import Results, compare
from airline_gym.harness.results.breakdown import breakdown, compare_breakdowns
from airline_gym.harness.results.comparability import RunsDiffer, check_comparable
from airline_gym.harness.results.compare import Comparison
from airline_gym.harness.results.io import check_unique
from airline_gym.harness.results.metrics import judge_error_of, task_successes
from airline_gym.printable import printable


def print_refusal(prog: str, refused: RunsDiffer) -> int:
    """Say why two runs are not set side by side, one line per difference; exit code 2."""
    for line in refused.lines():
        print(f"{prog}: error: {line}", file=sys.stderr)
    return 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym compare``."""
    parser.add_argument("a", metavar="A.json", help="the baseline results file")
    parser.add_argument("b", metavar="B.json", help="the results file compared with it")
    parser.add_argument("--changed", action="store_true", help="only tasks whose rate changed")
    parser.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    parser.add_argument(
        "--allow-different",
        action="store_true",
        help="compare even runs that differ besides the agent (task set, benchmark, reward "
        "basis, customer, protocol); the differences are printed first",
    )


def _tally(value: tuple[int, int] | None) -> str:
    return "-" if value is None else f"{value[0]}/{value[1]}"


def _pass(values: dict[int, float]) -> str:
    return "  ".join(f"pass^{k} {v:.3f}" for k, v in values.items()) or "no simulations"


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym compare``."""
    missing = [p for p in (args.a, args.b) if not Path(p).is_file()]
    if missing:
        raise MissingFileError(f"no such file: {', '.join(missing)}")
    a, b = Results.load(args.a), Results.load(args.b)
    check_unique(a.simulations, args.a)
    check_unique(b.simulations, args.b)
    try:
        check_comparable(a, b, args.allow_different)
    except RunsDiffer as refused:
        return print_refusal("airline-gym compare", refused)
    result = compare(a, b)
    failed = {label: _judge_failures(run) for label, run in (("a", a), ("b", b))}
    groups = {"a": _breakdown(a), "b": _breakdown(b)}
    if args.json:
        extra = {f"judge_failures_{label}": n for label, n in failed.items()}
        record = {"a": args.a, "b": args.b, **result.to_dict(), **extra, "breakdown": groups}
        print(json.dumps(record))
        return 0
    rows = [
        (t.task_id, _tally(t.a), _tally(t.b), "" if t.change == "same" else t.change)
        for t in result.tasks
        if not args.changed or t.change != "same"
    ]
    print(f"A: {args.a}\nB: {args.b}\n")
    for difference in result.differences:
        print(f"note: the runs differ in {difference}")
    if result.differences:
        print()
    print(format_table(("task", "A", "B", "change"), rows))
    print()
    for label, values, mean in (
        ("A", result.pass_hat_k_a, result.mean_reward_a),
        ("B", result.pass_hat_k_b, result.mean_reward_b),
    ):
        shown = "-" if mean is None else f"{mean:.3f}"
        print(f"{label}: {_pass(values)}  mean reward {shown}")
        if failed[label.lower()]:
            print(
                f"   {failed[label.lower()]} simulation(s) of {label} have no verdict (the NL "
                "judge failed): counted as failures, not graded"
            )
    print(f"improved ({len(result.improved)}): {printable(', '.join(result.improved)) or '-'}")
    print(f"regressed ({len(result.regressed)}): {printable(', '.join(result.regressed)) or '-'}")
    print()
    print(_paired_text(result))
    by_label = compare_breakdowns(groups["a"], groups["b"])
    if by_label:
        print()
        print(printable("\n".join(by_label), lines=True))
    return 0


def _breakdown(run: Results) -> dict[str, Any]:
    """The run's pass^1 by kind, outcome, bin and DB effect (generated tasks' labels)."""
    return breakdown(run.tasks, task_successes(run.simulations))


def _judge_failures(run: Results) -> int:
    return sum(judge_error_of(sim) is not None for sim in run.simulations)


def _paired_text(result: Comparison) -> str:
    """B - A per k with its interval, and the verdict on pass^1."""
    if not result.paired:
        return "verdict: none (no task in both runs)"
    tasks = next(iter(result.paired.values())).tasks
    lines = [f"B - A over the {tasks} task(s) in both (95% interval, paired bootstrap over tasks):"]
    for k, p in result.paired.items():
        d = p.difference
        lines.append(
            f"  pass^{k}: A {p.a:.3f}  B {p.b:.3f}  B - A {d.estimate:+.3f} "
            f"[{d.low:+.3f}, {d.high:+.3f}]  {p.verdict}"
        )
    lines.append(f"verdict (pass^1): {result.verdict}")
    if result.warning:
        lines.append(f"warning: {result.warning}")
    return "\n".join(lines)
