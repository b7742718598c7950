"""Text from a file, made safe to print: control characters shown as escapes (stdlib only).

A task file, a results file or a DB may hold ESC, BEL, CR, C1 controls (``\\x9b`` is a CSI) or
characters that reorder the text on screen (``\\u202e``); printed raw, they move the cursor,
clear the screen, recolour or hide the rest of the line, or make a terminal answer. Every
printer of such text passes it through :func:`printable`, which shows each as its Python escape.

>>> printable("g0_0\\x1b[2J\\a")
'g0_0\\\\x1b[2J\\\\x07'
>>> printable("two\\nlines\\ttab\\r", lines=True)
'two\\nlines\\ttab\\\\r'
"""

from __future__ import annotations

import re

__all__ = ["printable"]

# DEL and the C1 controls, and the characters that reorder or separate text on screen
# (bidirectional marks, embeddings, overrides and isolates; line and paragraph separators).
_OTHERS = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ONE_LINE = re.compile(f"[\x00-\x1f{_OTHERS}]")  # every C0 control
_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")  # C0 but tab and newline


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: object, lines: bool = False) -> str:
    """``str(text)`` with every control character as its escape (``\\x1b``, ``\\r``,
    ``\\u202e``); ``lines``: newlines and tabs kept (a block of text), else escaped too."""
    shown = str(text)
    return (_LINES if lines else _ONE_LINE).sub(_escape, shown)
