"""Reading a file whose size the outside world decides: refused over a documented size, before
a byte of it is read.

Every file airline-gym reads whole goes through :func:`read_limited` (bytes) or
:func:`read_limited_text` (UTF-8 text), with the limit of its kind; a results file or journal
that ``eval --resume`` reads a line at a time is held to the same limit
(:func:`refuse_over_limit`, :func:`read_line_limited`):

=====================================================  =========
file                                                   limit
=====================================================  =========
a results file, an eval journal, a replay source       256 MiB
a tasks file (``--tasks``, tasks.json, split file)     64 MiB
a task id map (``--task-id-map``)                      64 MiB
the airline database (``db.json``)                     128 MiB
text: policy.md, the customer's guidelines, the agent  16 MiB
instruction, the reference's source files
=====================================================  =========

``$AIRLINE_GYM_MAX_FILE_MB`` (a whole number of MiB) replaces every limit, for a run larger than
these allow. The size is checked on the open file (``fstat``) and at most the limit plus one
byte is read, so a file that grows, or a device with no size, is refused all the same.
"""

from __future__ import annotations

import os
from typing import IO

from airline_gym.errors import ConfigError
from airline_gym.numbers import whole_number

__all__ = [
    "DB_MAX_BYTES",
    "ENV_MAX_FILE_MB",
    "RESULTS_MAX_BYTES",
    "TASKS_MAX_BYTES",
    "TASK_ID_MAP_MAX_BYTES",
    "TEXT_MAX_BYTES",
    "FileTooLargeError",
    "effective_limit",
    "read_limited",
    "read_limited_text",
    "read_line_limited",
    "refuse_over_limit",
    "size_text",
]

MIB = 1 << 20
RESULTS_MAX_BYTES = 256 * MIB
TASKS_MAX_BYTES = 64 * MIB
TASK_ID_MAP_MAX_BYTES = 64 * MIB
DB_MAX_BYTES = 128 * MIB
TEXT_MAX_BYTES = 16 * MIB
ENV_MAX_FILE_MB = "AIRLINE_GYM_MAX_FILE_MB"


class FileTooLargeError(ConfigError):
    """A file over the limit of its kind (refused before it is read)."""


def effective_limit(default: int) -> int:
    """``default``, or ``$AIRLINE_GYM_MAX_FILE_MB`` MiB when that is set."""
    raw = os.environ.get(ENV_MAX_FILE_MB, "").strip()
    if not raw:
        return default
    mib = whole_number(raw)
    if mib is None or not 0 < mib <= 1 << 20:
        raise ConfigError(
            f"{ENV_MAX_FILE_MB}={raw[:40]!r}: expected a whole number of MiB from 1 to 1048576"
        )
    return mib * MIB


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n // scale} {unit}" if n % scale == 0 else f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _too_large(path: str | os.PathLike[str], what: str, size: str, limit: int) -> None:
    raise FileTooLargeError(
        f"{what} {os.fspath(path)} is {size}, over its limit of {size_text(limit)}; refused "
        f"unread (set {ENV_MAX_FILE_MB} to raise the limit)"
    )


def read_limited(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of ``path``, or :class:`FileTooLargeError` when it is over ``limit`` bytes
    (``$AIRLINE_GYM_MAX_FILE_MB`` overrides it); ``what`` names the kind of file.

    ``OSError`` (no such file, a folder, no permission) propagates for the caller to word.
    """
    limit = effective_limit(limit)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            _too_large(path, what, size_text(size), limit)
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew since, or a device that reports no size
        _too_large(path, what, f"over {size_text(limit)}", limit)
    return data


def read_limited_text(path: str | os.PathLike[str], limit: int, what: str) -> str:
    """:func:`read_limited` decoded as UTF-8 (``UnicodeDecodeError`` propagates), with
    universal newlines as ``open(path, encoding="utf-8").read()`` gives them."""
    text = read_limited(path, limit, what).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def refuse_over_limit(fh: IO[bytes], limit: int, what: str, path: str | os.PathLike[str]) -> None:
    """:class:`FileTooLargeError` when the open file ``fh`` is over ``limit`` bytes (as
    :func:`read_limited` refuses it, unread), for a file then read a line at a time."""
    limit = effective_limit(limit)
    size = os.fstat(fh.fileno()).st_size
    if size > limit:
        _too_large(path, what, size_text(size), limit)


def read_line_limited(fh: IO[bytes], limit: int, path: str | os.PathLike[str]) -> bytes:
    """The next line of a file read a line at a time (with its newline; ``b""`` at the end):
    a line over ``limit`` bytes (``$AIRLINE_GYM_MAX_FILE_MB`` overrides it) is a
    :class:`FileTooLargeError`, read no further than the limit."""
    limit = effective_limit(limit)
    line = fh.readline(limit + 1)
    if len(line) > limit:
        raise FileTooLargeError(
            f"{os.fspath(path)} has a line over {size_text(limit)}, its limit; refused (set "
            f"{ENV_MAX_FILE_MB} to raise the limit)"
        )
    return line
