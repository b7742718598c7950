"""Which messages of a growing dialogue a customer has not read yet.

The env hands a customer the whole dialogue at every reply, the earlier messages being the same
objects each time. :class:`DialogueCursor` lets a customer read only the new ones, so a reply
costs the same at turn 10 and at turn 10,000; a dialogue that does not continue the last one
(edited, shortened, built afresh) is read from its start.

>>> cursor = DialogueCursor()
>>> talk = [{"role": "assistant", "content": "Hi!"}]
>>> cursor.advance(talk)
0
>>> talk += [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Yes?"}]
>>> cursor.advance(talk)
1
>>> cursor.advance(talk) is None
True
>>> cursor.advance([{"role": "assistant", "content": "Hi!"}])
0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DialogueCursor"]


class DialogueCursor:
    """Remembers how far a dialogue was read, and its last message read."""

    def __init__(self) -> None:
        self.count = 0
        self._last: Any = None
        self._key: tuple[Any, Any] | None = None

    def advance(self, dialogue: Sequence[Mapping[str, Any]]) -> int | None:
        """The index of the first message not read yet (0: read it all, from the start; None:
        nothing new), and mark the whole dialogue read."""
        n, count = len(dialogue), self.count
        continues = 0 < count <= n and self._same(dialogue[count - 1])
        if continues and count == n:
            return None
        start = count if continues else 0
        self.count = n
        self._last = dialogue[-1] if n else None
        self._key = _key(self._last) if n else None
        return start

    def _same(self, message: Mapping[str, Any]) -> bool:
        # the env's dialogue keeps its dicts: identity is the cheap, usual answer
        return message is self._last or _key(message) == self._key


def _key(message: Any) -> tuple[Any, Any]:
    if not isinstance(message, Mapping):
        return (None, message)
    return (message.get("role"), message.get("content"))
