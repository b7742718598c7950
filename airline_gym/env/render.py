"""Readable transcripts of an episode (ANSI colour when asked)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from airline_gym.printable import printable

if TYPE_CHECKING:
    from airline_gym.env.episode import Episode

_COLOURS = {"assistant": "\033[36m", "user": "\033[33m", "tool": "\033[90m", "system": "\033[31m"}
_RESET = "\033[0m"
_BOLD = "\033[1m"


def colourise(text: str, role: str, colour: bool = True) -> str:
    """``text`` in the role's colour (bold), or as is when ``colour`` is false."""
    return f"{_COLOURS.get(role, '')}{_BOLD}{text}{_RESET}" if colour else text


def _line(message: dict[str, Any], malformed: Mapping[str, str]) -> list[tuple[str, str]]:
    role = message["role"]
    out: list[tuple[str, str]] = []
    if message.get("content"):
        out.append((role, str(message["content"])))
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        why = malformed.get(call.get("id", ""))
        if why is not None:  # never read: its arguments in the history are a placeholder
            out.append((role, f"-> {fn['name']}(?) MALFORMED, not run: {why}"))
            continue
        try:
            raw = fn["arguments"]
            args = json.loads(raw) if isinstance(raw, str) else raw
            shown = f"({', '.join(f'{k}={json.dumps(v)}' for k, v in args.items())})"
        except (ValueError, AttributeError, TypeError, RecursionError):
            shown = f"({fn['arguments']}) MALFORMED: the arguments are not a JSON object"
        out.append((role, f"-> {fn['name']}{shown}"))
    return out


def transcript(
    messages: list[dict[str, Any]],
    colour: bool = False,
    max_tool_chars: int = 400,
    malformed: Mapping[str, str] | None = None,
) -> str:
    """One line (or block) per message: ``role: text``; tool results shortened. ``malformed``
    (tool-call id -> why, as ``Episode.malformed``): calls shown as malformed, not as called."""
    lines = []
    for message in messages:
        for role, text in _line(message, malformed or {}):
            if role == "tool" and len(text) > max_tool_chars:
                text = text[:max_tool_chars] + f"... ({len(text)} chars)"
            text = printable(text, lines=True)  # a DB or task text may hold control codes
            label = f"{role:>9}: "
            if colour:
                label = f"{_COLOURS.get(role, '')}{_BOLD}{label}{_RESET}{_COLOURS.get(role, '')}"
                text = text + _RESET
            lines.append(label + text)
    return "\n".join(lines)


def wants_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never with ``NO_COLOR`` set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def print_new(episode: Episode, already: int, stream: TextIO | None = None) -> int:
    """Print the episode's messages after the first ``already`` (and how it ended, once it
    has); returns how many are printed now in all. Each message is printed once."""
    out = stream if stream is not None else sys.stdout
    messages = episode.messages
    lines = []
    if already == 0:
        lines.append(f"--- task {printable(episode.task.id)} ---")
    new = messages[already:]
    if new:
        lines.append(transcript(new, colour=wants_colour(out), malformed=episode.malformed))
    if episode.done and (new or already == 0):
        lines.append(f"--- ended: {episode.termination_reason} ---")
    if lines:
        # lone surrogates (possible in agent text) cannot be encoded: escape them
        text = "\n".join(lines)
        print(text.encode("utf-8", "backslashreplace").decode("utf-8"), file=out)
    return len(messages)
