"""Lists handed to callers whose items are copied when first read, not when handed out.

``info["messages"]`` holds the whole history and ``info["tools"]`` fifteen schemas: copying
them on every step made a step's cost grow with the episode (step 800 cost 40x step 10) and
every env hold its own ~40 KiB of tools. A :class:`CopyOnRead` list is built in one C-level
pointer copy from :class:`Shared` items; reading an item through Python (indexing, slicing,
iteration, ``pop``, ``copy``, ``+``, pickling) first replaces it, in this list only, with a
private deep copy. So whatever a caller edits is its own, exactly as if every step had copied
everything, and readers that never touch an item in Python (``json.dumps``, ``len``, ``==``)
pay nothing per item.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, SupportsIndex, overload

from airline_gym.domain.database import clone

__all__ = ["CopyOnRead", "Shared"]


class Shared(dict[str, Any]):
    """A dict shared by many :class:`CopyOnRead` lists; they hand out copies of it, never it."""

    __slots__ = ()


def _own(item: Any) -> Any:
    if type(item) is not Shared:
        return item
    if any(isinstance(value, (dict, list)) for value in item.values()):
        return clone(item)
    return dict(item)  # flat (e.g. a message without tool calls): a shallow copy is a deep one


class CopyOnRead(list[Any]):
    """A ``list`` that replaces a :class:`Shared` item by a private copy when it is read."""

    __slots__ = ()

    @classmethod
    def of(cls, *parts: Iterable[Any]) -> CopyOnRead:
        """The concatenation of ``parts`` (lists, tuples or CopyOnRead lists), items unread."""
        view = cls()
        for part in parts:
            # list.extend on a list/tuple copies the item pointers in C, reading nothing
            list.extend(view, list.copy(part) if isinstance(part, CopyOnRead) else part)
        return view

    def _read(self, index: SupportsIndex) -> Any:
        item = list.__getitem__(self, index)
        if type(item) is Shared:
            item = _own(item)
            list.__setitem__(self, index, item)
        return item

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        if isinstance(index, slice):
            return [self._read(i) for i in range(*index.indices(len(self)))]
        return self._read(index)

    def __iter__(self) -> Iterator[Any]:
        i = 0
        while i < len(self):  # like list iteration: sees appends made while iterating
            yield self._read(i)
            i += 1

    def __reversed__(self) -> Iterator[Any]:
        for i in range(len(self) - 1, -1, -1):
            if i < len(self):
                yield self._read(i)

    def pop(self, index: SupportsIndex = -1) -> Any:
        """``list.pop``, returning a private copy."""
        return _own(list.pop(self, index))

    def copy(self) -> list[Any]:
        """A plain list of private copies."""
        return list(iter(self))

    def sort(self, *, key: Any = None, reverse: bool = False) -> None:
        """``list.sort``; the key function only ever sees private copies."""
        for i in range(len(self)):
            self._read(i)
        list.sort(self, key=key, reverse=reverse)

    def __add__(self, other: Iterable[Any]) -> list[Any]:
        return [*self, *other]

    def __radd__(self, other: Iterable[Any]) -> list[Any]:
        return [*other, *self]

    def __mul__(self, times: SupportsIndex) -> list[Any]:
        return self.copy() * times

    __rmul__ = __mul__

    def __reduce__(self) -> tuple[Any, ...]:
        # copy.copy, copy.deepcopy and pickle (e.g. to a vector env's parent) get a plain list
        return (list, (self.copy(),))
