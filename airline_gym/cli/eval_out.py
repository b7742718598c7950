"""``eval``'s output files in the CLI's words: an --out or --plot it refuses, what Ctrl-C
kept, and the ``--report`` page (refused before the run when it is a folder; a failure to
write it after the run is one line, the results file staying saved)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from airline_gym.data.output import check_output
from airline_gym.errors import ConfigError, require
from airline_gym.harness.interrupt import Interrupted

__all__ = ["check_out", "check_plot", "check_report_page", "interrupted_line", "write_page"]


def check_out(out: Path, resume: bool) -> None:
    """Refuse an --out that cannot be written, or continued without --resume."""
    try:
        folder = out.is_dir()
    except OSError:  # a name too long: said below
        folder = False
    if folder:
        raise ConfigError(f"--out {out} is a directory: give a results file path")
    journal = out.with_name(out.name + ".journal")
    if out.parent.is_dir():  # else the run makes it, or says why it cannot
        check_output(out, "--out")  # a device, a fifo, a name too long
        if not os.path.lexists(journal):
            check_output(journal, "--out's journal")  # its name may be too long
    if resume:
        return
    if out.exists():
        raise ConfigError(f"{out} exists: pass --resume to continue it, or choose another --out")
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


def check_report_page(out: Path) -> None:
    """Refuse ``--report`` before the run when its page (beside ``out``) is a folder."""
    from airline_gym.cli.report import default_output

    page = default_output(out)
    if page.is_dir():
        raise ConfigError(
            f"--report writes {page}, which is a folder: remove it or choose another --out"
        )


def write_page(out: Path) -> Path | None:
    """The run's HTML report beside ``out`` (``airline-gym report``'s default path); when it
    cannot be written, one line on stderr (the results file stays saved) and ``None``."""
    from airline_gym.cli.report import default_output
    from airline_gym.harness.report import write_report

    page = default_output(out)
    try:
        return write_report([out], page)
    except (OSError, ConfigError) as exc:  # the writer's refusals carry strerror too
        print(
            f"airline-gym eval: error: cannot write the report {page} "
            f"({getattr(exc, 'strerror', None) or exc}); the results are saved in {out} (run "
            f"`airline-gym report {out} --out OTHER.html` to write it elsewhere)",
            file=sys.stderr,
        )
        return None


def check_plot(path: Path) -> None:
    """Refuse, before the run, a --plot file matplotlib cannot write: no matplotlib, an image
    format it does not know (by the file's suffix), a directory, or a missing folder."""
    backend = require("matplotlib.backend_bases", "plot", "--plot")
    formats = backend.FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix[1:].lower()
    if suffix and suffix not in formats:
        raise ConfigError(
            f"--plot {path}: matplotlib cannot write .{suffix} images; use one of "
            + ", ".join(f".{name}" for name in sorted(formats))
        )
    if path.is_dir():
        raise ConfigError(f"--plot {path} is a directory: give an image file path")
    if not path.parent.is_dir():
        raise ConfigError(f"--plot {path}: no such folder {path.parent}")
