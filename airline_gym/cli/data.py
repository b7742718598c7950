"""Show where the data comes from, and install the tau3 files into the cache once for all.

The tau2 data is fetched into the cache on first use; the tau3 files are downloaded on first
use of --benchmark tau3. Offline, install them once from a folder (their own names, a
tau2-bench checkout, or any names: they are recognized by size and checksum) or from a mirror
of the repository; later commands need no $AIRLINE_GYM_TAU3_DIR.

  airline-gym data                              (the same as `airline-gym data status`)
  airline-gym data install ~/tau3-files         (a folder: tasks.json, simulation_guidelines.md)
  airline-gym data install ~/src/tau2-bench     (a checkout at tau3-bench v1.0.0)
  airline-gym data install https://mirror.example/tau2-bench/01e812d
  airline-gym data install                      (download them, and fetch the tau2 data)
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from airline_gym.errors import ConfigError

_ACTIONS = ("status", "install")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym data``."""
    parser.add_argument(
        "action", nargs="?", default="status", choices=_ACTIONS, help="status (default) or install"
    )
    parser.add_argument(
        "source",
        nargs="?",
        metavar="FOLDER|URL",
        help="install: a folder holding the tau3 files, or a mirror's base URL (http/https)",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym data``."""
    if args.action == "status":
        if args.source is not None:
            raise ConfigError(f"status takes no FOLDER|URL (got {args.source!r})")
        for line in status_lines():
            print(line)
        return 0
    return _install(args.source)


def _install(source: str | None) -> int:
    from airline_gym.data import ensure_cache
    from airline_gym.data.tau3 import install_tau3

    if source is not None and not source.startswith(("http://", "https://")):
        if not source.strip():
            raise ConfigError("FOLDER|URL is empty")
        if not Path(source).expanduser().is_dir():
            raise ConfigError(f"{source!r} is neither a folder nor an http(s) URL")
    if source is None:
        print(f"tau2 data: {ensure_cache()} (verified)")
    files = install_tau3(source)
    print(f"tau3 files: installed in {files.tasks.parent} (verified)")
    return 0


def status_lines() -> list[str]:
    """Where each data set comes from and whether it verifies; nothing is fetched."""
    from airline_gym.data import ENV_DATA_DIR, cache_dir
    from airline_gym.data.cache import tau2_cached
    from airline_gym.data.tau3 import (
        ENV_TAU3_DIR,
        ENV_TAU3_URL,
        TAU3_URL,
        locate_tau3,
        tau3_cache_dir,
        tau3_installed,
    )

    lines = []
    own = os.environ.get(ENV_DATA_DIR, "")
    if own:
        lines.append(f"tau2 data: {ENV_DATA_DIR}={own} (checked when used)")
    elif tau2_cached():
        lines.append(f"tau2 data: {cache_dir()} (verified)")
    else:
        lines.append(f"tau2 data: not fetched yet; fetched into {cache_dir()} on first use")
    folder = os.environ.get(ENV_TAU3_DIR, "")
    cached = tau3_cache_dir()
    if folder:
        _, problem = locate_tau3(Path(folder).expanduser())
        state = "verified" if problem is None else f"NOT usable: {problem}"
        lines.append(f"tau3 files: {ENV_TAU3_DIR}={folder} ({state})")
    elif tau3_installed():
        lines.append(f"tau3 files: {cached} (installed, verified)")
    else:
        base = os.environ.get(ENV_TAU3_URL, "") or TAU3_URL
        lines.append(
            f"tau3 files: not installed; downloaded from {base} on first use of --benchmark "
            "tau3, or install them now: airline-gym data install [FOLDER|URL]"
        )
    return lines
