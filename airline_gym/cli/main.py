"""airline-gym: the tau2-bench airline domain as a Gymnasium environment.

Play or watch episodes, evaluate agents, inspect tasks and re-grade recorded runs.
Run 'airline-gym COMMAND --help' for a command's options and examples.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import re
import sys
from collections.abc import Sequence

from airline_gym.errors import AirlineGymError

# subcommand name -> module with ``add_arguments(parser)`` and ``run(args) -> int``
COMMANDS: dict[str, str] = {
    "demo": "airline_gym.cli.demo",
    "eval": "airline_gym.cli.eval",
    "tasks": "airline_gym.cli.tasks",
    "show": "airline_gym.cli.show",
    "play": "airline_gym.cli.play",
    "audit": "airline_gym.cli.audit",
    "compare": "airline_gym.cli.compare",
    "regrade": "airline_gym.cli.regrade",
    "bench": "airline_gym.testing.bench",
    "serve": "airline_gym.cli.serve",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument as one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


_SPEC_REFERENCE = re.compile(r"\s*\((?:see )?spec(?:ification)? ?§?[\d.]+\)")


def screen_text(doc: str) -> str:
    """A docstring as help text: no reST double backticks, no references to the spec."""
    return _SPEC_REFERENCE.sub("", doc).replace("``", "'")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand."""
    from airline_gym import __version__

    parser = _Parser(prog="airline-gym", description=__doc__)
    parser.add_argument("--version", action="version", version=f"airline-gym {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log what airline-gym does to stderr (-v: info, -vv: debug)",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        doc = screen_text((module.__doc__ or "").strip())
        command = sub.add_parser(
            name,
            help=doc.splitlines()[0] if doc else None,
            description=doc,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    args = build_parser().parse_args(argv)
    if args.verbose:
        logging.basicConfig(
            level=logging.DEBUG if args.verbose > 1 else logging.INFO,
            format="%(levelname)s %(name)s: %(message)s",
        )
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, not at exit
        return code
    except BrokenPipeError:  # the reader went away (e.g. '| head'): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the flush at exit does not fail again
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except AirlineGymError as exc:  # expected failures: one line; anything else is a bug
        text = " ".join(str(exc).split()) or type(exc).__name__
        print(f"airline-gym {args.command}: error: {text}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
