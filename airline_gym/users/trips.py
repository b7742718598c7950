"""The customer's words for a reservation whose id it cannot say: its trip, read from the DB."""

from __future__ import annotations

import functools
import os
from typing import Any

from airline_gym.data import data_files
from airline_gym.domain.database import load_pristine
from airline_gym.taskgen.asks import trip_words

__all__ = ["Trips", "trips"]


class Trips:
    """``describe(reservation_id)``: the trip as its owner would name it (read from the DB once
    per reservation; a pickle carries only ``data_dir``)."""

    def __init__(self, data_dir: Any = None) -> None:
        self.data_dir = data_dir
        self._said: dict[str, str | None] = {}

    def __call__(self, reservation_id: str) -> str | None:
        if reservation_id not in self._said:
            self._said[reservation_id] = self._describe(reservation_id)
        return self._said[reservation_id]

    def _describe(self, reservation_id: str) -> str | None:
        path = None if self.data_dir is None else data_files(self.data_dir).db
        record = load_pristine(path).reservations.get(reservation_id)
        return None if record is None else trip_words(record)

    def __getstate__(self) -> dict[str, Any]:
        return {"data_dir": self.data_dir}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["data_dir"])  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trips) and other.data_dir == self.data_dir

    def __hash__(self) -> int:
        return hash(str(self.data_dir))

    def __repr__(self) -> str:
        return f"Trips(data_dir={self.data_dir!r})"


@functools.lru_cache(maxsize=64)
def _trips_of(data_dir: str | None) -> Trips:
    return Trips(data_dir)


def trips(data_dir: Any) -> Trips:
    """The trip describer of ``data_dir``'s DB, shared by every player on it."""
    if data_dir is None or isinstance(data_dir, (str, os.PathLike)):
        return _trips_of(None if data_dir is None else os.fspath(data_dir))
    return Trips(data_dir)
