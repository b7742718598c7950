"""Replay a soak episode's tool calls on the reference (``tau2``) airline environment."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from airline_gym.domain.database import (
    TABLES,
    canonical_json,
)


class ReferenceReplayer:
    """Replays tool calls on the reference (``tau2``) airline environment from a pristine DB.

    One reference environment is built once; records are copied before a call may write them,
    so :meth:`reset` brings back the pristine DB in microseconds.
    """

    def __init__(self) -> None:
        from loguru import logger
        from tau2.data_model.message import ToolCall
        from tau2.domains.airline.environment import get_environment

        logger.disable("tau2")
        self._tool_call = ToolCall
        self.env = get_environment()
        self.db = self.env.tools.db
        self.pristine = {t: dict(getattr(self.db, t)) for t in TABLES}
        self.owned: dict[str, set[str]] = {t: set() for t in TABLES}
        self._n = 0

    def reset(self) -> None:
        """Back to the pristine DB."""
        for table in TABLES:
            live = getattr(self.db, table)
            live.clear()
            live.update(self.pristine[table])
            self.owned[table].clear()

    def _own(self, table: str, key: Any) -> None:
        live = getattr(self.db, table)
        if isinstance(key, str) and key in live and key not in self.owned[table]:
            live[key] = live[key].model_copy(deep=True)
            self.owned[table].add(key)

    def prepare(self, name: str, arguments: Any) -> Any:
        """Copy the records the call may write, and return the reference ``ToolCall``."""
        args = arguments if isinstance(arguments, dict) else {}
        self.copy_for_write(name, args)
        self._n += 1
        return self._tool_call(id=f"r{self._n}", name=name, arguments=args, requestor="assistant")

    def copy_for_write(self, name: str, args: dict[str, Any]) -> None:
        """Give the live DB its own copy of every record ``name`` may write (any call: all
        records its arguments name; a subclass may narrow this per tool)."""
        self._own("users", args.get("user_id"))
        for info in args.get("flights") or ():
            if isinstance(info, dict):
                self._own("flights", info.get("flight_number"))
        rid = args.get("reservation_id")
        if isinstance(rid, str) and rid in self.db.reservations:
            self._own("reservations", rid)
            self._own("users", self.db.reservations[rid].user_id)

    def call(self, name: str, arguments: Any) -> tuple[str, bool]:
        """Run one call through ``env.get_response``; (content, error)."""
        message = self.env.get_response(self.prepare(name, arguments))
        return str(message.content), bool(message.error)

    def value(self, table: str, key: str, path: tuple[str, ...]) -> Any:
        """A value of the reference DB, by the same path as in our records."""
        record = getattr(self.db, table).get(key)
        node: Any = None if record is None else record.model_dump()
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        return node

    def record_json(self, table: str, key: str) -> str | None:
        """The hash serialisation of one reference record."""
        record = getattr(self.db, table).get(key)
        return None if record is None else canonical_json(record.model_dump())

    def replay(self, calls: Iterable[tuple[str, Any]]) -> list[tuple[str, bool]]:
        """Reset, then run ``calls`` in order; their (content, error)."""
        self.reset()
        return [self.call(name, args) for name, args in calls]
