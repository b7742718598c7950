"""Readable transcripts of an episode (ANSI colour when asked)."""

from __future__ import annotations

import json
from typing import Any

_COLOURS = {"assistant": "\033[36m", "user": "\033[33m", "tool": "\033[90m", "system": "\033[31m"}
_RESET = "\033[0m"
_BOLD = "\033[1m"


def colourise(text: str, role: str, colour: bool = True) -> str:
    """``text`` in the role's colour (bold), or as is when ``colour`` is false."""
    return f"{_COLOURS.get(role, '')}{_BOLD}{text}{_RESET}" if colour else text


def _line(message: dict[str, Any]) -> list[tuple[str, str]]:
    role = message["role"]
    out: list[tuple[str, str]] = []
    if message.get("content"):
        out.append((role, str(message["content"])))
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        try:
            args = (
                json.loads(fn["arguments"]) if isinstance(fn["arguments"], str) else fn["arguments"]
            )
            shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items())
        except (ValueError, AttributeError, TypeError, RecursionError):
            shown = str(fn["arguments"])
        out.append((role, f"-> {fn['name']}({shown})"))
    return out


def transcript(
    messages: list[dict[str, Any]], colour: bool = False, max_tool_chars: int = 400
) -> str:
    """One line (or block) per message: ``role: text``; tool results shortened."""
    lines = []
    for message in messages:
        for role, text in _line(message):
            if role == "tool" and len(text) > max_tool_chars:
                text = text[:max_tool_chars] + f"... ({len(text)} chars)"
            label = f"{role:>9}: "
            if colour:
                label = f"{_COLOURS.get(role, '')}{_BOLD}{label}{_RESET}{_COLOURS.get(role, '')}"
                text = text + _RESET
            lines.append(label + text)
    return "\n".join(lines)
