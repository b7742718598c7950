"""Show one task: the customer's scenario, the gold actions and what must be said.

Known info is what the simulated customer can tell you; unknown info is what it does not know.
Gold actions marked * change the database (the final database must equal the one they produce);
the communicate strings must appear in the agent's messages.

  airline-gym show 17
  airline-gym show --task 17
  airline-gym show 5 --json
  airline-gym show 7 --benchmark tau3
"""

from __future__ import annotations

import argparse
import json
import textwrap

from airline_gym.cli.flags import TASK_HELP
from airline_gym.cli.formatting import call_text, write_count
from airline_gym.cli.options import add_benchmark_arguments
from airline_gym.cli.tasks import splits_of, task_record
from airline_gym.domain.benchmarks import benchmark_tasks
from airline_gym.domain.tasks import load_task_set
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.errors import ConfigError
from airline_gym.printable import printable

_SCENARIO = (
    ("reason_for_call", "Reason for call"),
    ("known_info", "Known info"),
    ("unknown_info", "Unknown info"),
    ("task_instructions", "Task instructions"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym show``."""
    parser.add_argument(
        "task_given", metavar="TASK", nargs="?", help=f"{TASK_HELP} (or --task TASK)"
    )
    parser.add_argument("--task", metavar="TASK", help=TASK_HELP)
    add_benchmark_arguments(parser)
    parser.add_argument("--json", action="store_true", help="the task record as JSON")


def _block(title: str, text: str | None) -> list[str]:
    if text is None or not str(text).strip():
        return []
    body = textwrap.indent(str(text).strip(), "    ")
    return [f"  {title}:", body]


def _task_id(args: argparse.Namespace) -> str:
    """The task ``show TASK`` or ``show --task TASK`` names (one of the two)."""
    given: list[str] = [
        str(t).strip() for t in (getattr(args, "task_given", None), args.task) if t is not None
    ]
    if not given:
        raise ConfigError("name the task: airline-gym show TASK (or --task TASK)")
    if len(given) == 2 and given[0] != given[1]:
        raise ConfigError(f"two tasks named ({given[0]} and --task {given[1]}): name one")
    return given[0]


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym show``."""
    task_set = load_task_set(benchmark_tasks(args.tasks, args.benchmark))
    task = task_set[_task_id(args)]
    if args.json:
        record = task_record(task_set, task)
        record["user_scenario"] = task.raw.get("user_scenario")
        record["nl_assertions"] = list(task.nl_assertions)
        print(json.dumps(record))
        return 0
    splits = ", ".join(splits_of(task_set, task.id)) or "-"
    lines = [f"task {task.id} ({task_set.name}; splits: {splits})"]
    if task.purpose:
        lines.append(f"purpose: {' '.join(task.purpose.split())}")
    lines += ["", "customer scenario:"]
    instructions = task.instructions
    for key, title in _SCENARIO:
        lines += _block(title, instructions.get(key))
    if task.persona:
        lines += _block("Persona", task.persona)
    actions = task.actions
    lines += ["", f"gold actions ({len(actions)}, {write_count(actions)} changing the DB):"]
    for i, action in enumerate(actions, 1):
        mark = "*" if action.name in WRITE_TOOLS else " "
        lines.append(f"  {i:2d}.{mark} {call_text(action.name, action.arguments)}")
    if not actions:
        lines.append("  (none: the database must stay unchanged)")
    lines += ["", "must communicate:"]
    lines += [f"  {json.dumps(s)}" for s in task.communicate_info] or ["  (nothing)"]
    if task.nl_assertions:
        lines += ["", "NL assertions (diagnostic, not graded):"]
        lines += [f"  - {a}" for a in task.nl_assertions]
    lines += ["", f"reward: {' x '.join(task.reward_basis)} check"]
    print(printable("\n".join(lines), lines=True))
    return 0
