"""Audit the customer simulator of recorded runs: customer turns that break their scenario.

Reads tau2 results files (ours, tau2 run's, leaderboard submissions) and flags, per
simulation, each customer turn that breaks the customer's scenario, with its kind, message
index and text:

  premature_stop        ends the call on a write it accepted or asked for, before any write
  leak                  states a value its unknown_info withholds, before the agent said it
  invention             gives a user, reservation or payment id it was never given
  role_break            tool-call syntax, the agent's greeting, or the agent's lines
  empty_or_repeated     an empty turn, or the same text three times in a row
  unwarranted_transfer  ###TRANSFER### / ###OUT-OF-SCOPE### with no transfer and no reason

Scenarios come from the file's embedded tasks, else from --tasks, else from the tasks of the
benchmark version the file records in its info (else --benchmark, else tau2; which one, and
why, is said on stderr). Prints counts per kind and
per file, then the flagged turns; --json prints one JSON object with every simulation's flags.
Exit code 0, or 1 when some simulation could not be audited (its task has no scenario),
2 on bad arguments or an unreadable file (one line).

  airline-gym audit-user results.json
  airline-gym audit-user runs/*.json --json > audit.json
  airline-gym audit-user toolorchestra.json --task-id-map task_id_fix.json
  airline-gym audit-user tau3_run_without_tasks.json --benchmark tau3
"""

from __future__ import annotations

import argparse
import json
import sys

from airline_gym.cli.formatting import format_table
from airline_gym.domain.benchmarks import BENCHMARKS
from airline_gym.domain.user_audit import AUDIT_KINDS
from airline_gym.harness.user_audit import (
    FileAudit,
    audit_file,
    audit_totals,
    format_counts,
    shorten,
)

__all__ = ["add_arguments", "run"]

_SHOWN_CHARS = 110


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym audit-user``."""
    parser.add_argument("files", nargs="+", metavar="RESULTS.json", help="results files")
    parser.add_argument(
        "--benchmark",
        choices=BENCHMARKS,
        default=None,
        help="benchmark version of files without embedded tasks that do not record theirs "
        "(default tau2): its tasks' scenarios are used",
    )
    parser.add_argument(
        "--tasks",
        default=None,
        metavar="PATH",
        help="a tasks.json for files without embedded tasks (default: the benchmark "
        "version's tasks)",
    )
    parser.add_argument(
        "--task-id-map",
        default=None,
        metavar="FILE",
        help="JSON mapping simulation id -> real task id (flat, or a 'by_simulation_id' fix file)",
    )
    parser.add_argument("--json", action="store_true", help="every flag as one JSON object")


def _print_tables(audits: list[FileAudit]) -> None:
    totals = audit_totals(audits)
    counts = totals["counts"]
    assert isinstance(counts, dict)
    rows = [(a.path, len(a.audited), *(a.counts()[k] for k in AUDIT_KINDS)) for a in audits]
    rows.append(("total", totals["audited"], *(counts[k] for k in AUDIT_KINDS)))
    print(format_table(("file", "sims", *AUDIT_KINDS), rows))
    shown = [
        (
            a.path,
            s.task_id,
            s.trial,
            s.simulation_id[:8] or "-",
            flag["message_index"],
            flag["kind"],
            shorten(flag["evidence"], _SHOWN_CHARS),
        )
        for a in audits
        for s in a.audited
        for flag in s.flags
    ]
    if shown:
        print()
        print(format_table(("file", "task", "trial", "sim", "msg", "kind", "evidence"), shown))
    print()
    print(
        f"{totals['flagged_simulations']} of {totals['audited']} simulations flagged: "
        + format_counts(counts)
    )


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym audit-user``."""
    from airline_gym.harness.regrade import load_task_id_map

    try:
        id_map = load_task_id_map(args.task_id_map) if args.task_id_map else None
        audits = [
            audit_file(path, tasks=args.tasks, task_id_map=id_map, benchmark=args.benchmark)
            for path in args.files
        ]
    except OSError as exc:  # unreadable (permissions, a device, ...): one line
        print(f"airline-gym audit-user: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"files": [a.to_dict() for a in audits], "total": audit_totals(audits)}))
    else:
        _print_tables(audits)
    for audit in audits:
        if audit.scenarios:
            print(f"{audit.path}: scenarios of {audit.scenarios}", file=sys.stderr)
    failed = [(a.path, s) for a in audits for s in a.simulations if s.error is not None]
    for path, sim in failed[:5]:
        print(
            f"airline-gym audit-user: {path}: simulation {sim.simulation_id or sim.task_id} "
            f"not audited: {sim.error}",
            file=sys.stderr,
        )
    if len(failed) > 5:
        print(f"airline-gym audit-user: ... and {len(failed) - 5} more", file=sys.stderr)
    return 1 if failed else 0
