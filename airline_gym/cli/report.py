"""Write an HTML report of a results file (or of two, side by side): one page, works offline.

The page shows the run's overview (agent, customer, protocol, reward basis, task set, pass^k,
success per task and trial, terminations, tool errors, costs), every simulation's transcript
next to its grade (the DB diff field by field, each string to communicate highlighted where it
was said or marked "never said", the action checks, the termination and its cause), filters,
full-text search and a link per simulation (REPORT.html#task-17-trial-0). With two files it
also lists the tasks that flipped and shows their simulations side by side; two runs that
differ besides the agent are refused as 'airline-gym compare' refuses them (exit 2, one line
per difference) unless --allow-different is given, and then the page says how they differ.
Every simulation is re-graded on the way (as 'airline-gym regrade' does, on the reward basis
the file records) to get its DB diff.

Everything is inline (no server, no network): open the file in any browser.

  airline-gym report results.json
  airline-gym report before.json after.json -o diff.html
  airline-gym report toolorchestra.json --task-id-map task_id_fix.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from airline_gym.errors import ConfigError, MissingFileError
from airline_gym.harness.regrade import load_task_id_map
from airline_gym.harness.report import write_report
from airline_gym.harness.results.comparability import RunsDiffer

__all__ = ["add_arguments", "default_output", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym report``."""
    parser.add_argument("files", nargs="+", metavar="RESULTS.json", help="one or two results files")
    parser.add_argument(
        "-o",
        "--out",
        default=None,
        metavar="REPORT.html",
        help="where to write the page (default: beside the first file, .json -> .html)",
    )
    parser.add_argument(
        "--task-id-map",
        default=None,
        metavar="FILE",
        help="JSON mapping simulation id -> real task id for the first file (as regrade's)",
    )
    parser.add_argument(
        "--allow-different",
        action="store_true",
        help="set two runs side by side even when they differ besides the agent (task set, "
        "benchmark, reward basis, customer, protocol: as compare); the page says how",
    )


def default_output(results: str | Path) -> Path:
    """The report's default path: the results file's, ending in ``.html``."""
    path = Path(results)
    return (
        path.with_suffix(".html") if path.suffix == ".json" else path.with_name(path.name + ".html")
    )


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym report``."""
    if len(args.files) > 2:
        raise ConfigError(f"one or two results files, not {len(args.files)}")
    missing = [p for p in args.files if not Path(p).is_file()]
    if missing:
        raise MissingFileError(f"no such file: {', '.join(missing)}")
    out = Path(args.out) if args.out else default_output(args.files[0])
    if out.resolve() in {Path(p).resolve() for p in args.files}:
        raise ConfigError(f"{out}: refusing to write the report over a results file")
    maps = [load_task_id_map(args.task_id_map)] if args.task_id_map else []
    try:
        write_report(args.files, out, maps, allow_different=args.allow_different)
    except RunsDiffer as refused:
        from airline_gym.cli.compare import print_refusal

        return print_refusal("airline-gym report", refused)
    except OSError as exc:
        raise ConfigError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"report: {out}")
    return 0
