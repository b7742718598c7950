"""``eval``'s results file in the CLI's words: an --out it refuses, and what Ctrl-C kept."""

from __future__ import annotations

from pathlib import Path

from airline_gym.errors import ConfigError
from airline_gym.harness.interrupt import Interrupted

__all__ = ["check_out", "interrupted_line"]


def check_out(out: Path, resume: bool) -> None:
    """Refuse an --out that cannot be written, or continued without --resume."""
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory: give a results file path")
    if resume:
        return
    if out.exists():
        raise ConfigError(f"{out} exists: pass --resume to continue it, or choose another --out")
    journal = out.with_name(out.name + ".journal")
    if journal.exists():
        raise ConfigError(
            f"{out} has an unfinished run ({journal.name}): pass --resume to continue it, "
            "or choose another --out"
        )


def interrupted_line(stop: Interrupted) -> str:
    """The one line printed when Ctrl-C stopped the run."""
    done = f"{stop.saved} of {stop.total} simulations"
    if not stop.saved:
        return f"interrupted: {done} saved (nothing to resume)"
    return (
        f"interrupted: {done} saved in {stop.journal}; run the same command with --resume to "
        "play the rest"
    )
