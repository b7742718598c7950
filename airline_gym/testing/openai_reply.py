"""What a scripted OpenAI-compatible server answers: a :class:`Reply` (or a fault) and the
``chat.completion`` body that carries one; shared by the test server and the fast one."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

__all__ = ["FAULTS", "Reply", "completion_body", "is_status"]

#: Named faults understood by :class:`Reply`; any 3-digit string ("401", "503") is an HTTP error.
FAULTS = ("hang", "drip", "empty", "drop", "bad_json", "garbage")


@dataclass
class Reply:
    """One scripted response.

    ``tool_calls`` items are ``{"name": str, "arguments": dict | str}``; dict arguments are
    JSON-encoded, strings are sent verbatim. ``fault`` is ``None``, one of :data:`FAULTS`, or
    an HTTP status such as ``"500"``, ``"429"`` (sent with ``Retry-After: retry_after``) or
    ``"401"``. ``hang`` waits ``hang_seconds`` (or until the server stops) then closes the
    socket without answering; ``drip`` sends the headers of a 200, then one byte of body every
    ``drip_interval`` seconds (0.1) for ``hang_seconds`` (a read timeout never fires).
    ``delay`` seconds pass before any answer (a slow model).
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    fault: str | None = None
    retry_after: str | None = "0"
    hang_seconds: float = 30.0
    delay: float = 0.0
    drip_interval: float = 0.1

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in FAULTS and not is_status(self.fault):
            raise ValueError(f"unknown fault {self.fault!r}; expected one of {FAULTS} or 'NNN'")


def is_status(fault: str) -> bool:
    return len(fault) == 3 and fault.isdigit() and 100 <= int(fault) <= 599


def completion_body(
    completion_id: str, model: str, message: dict[str, Any], usage: dict[str, int]
) -> dict[str, Any]:
    """A ``chat.completion`` response body carrying ``message``."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage,
    }
