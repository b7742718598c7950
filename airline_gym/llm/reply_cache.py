"""A reply cache: chat replies stored by the exact request, in an SQLite file.

A re-run whose dialogue reaches the same state sends the same request (model, sampling
settings, seed, messages, tools) and gets the stored reply without calling the model:
reproducible ablations at a fraction of the cost. The key is the SHA-256 of the request body's
canonical JSON (sorted keys, integral floats as integers), where the body is what
:meth:`~airline_gym.llm.client.LiteLLMChatModel.litellm_request` builds, without what does not
change the reply: the endpoint, the key (and any field that may carry a credential, such as
``extra_headers``: never written to the file), timeouts and retries. So one cache serves a model
reached directly or through litellm, at any address.

The file is SQLite (standard library) in WAL mode with a busy timeout: threads, the async
path and several processes can share it. When two runs miss the same request at once, the first
reply stored wins and both use it. A file that is not a reply cache (damaged, or another
program's database) is refused with a one-line :class:`ReplyCacheError`, before anything runs.
A damaged row (not a stored reply's JSON, over :data:`MAX_ROW_CHARS`) is a miss: the model is
asked again and the row overwritten. A caller's ``accept`` test keeps replies it cannot use (a
judge reply that does not parse, a customer reply without text) out of the file, so a retry
really asks the model again.

Wrap any :class:`~airline_gym.llm.client.LiteLLMChatModel` (the customer's, a judge's)::

    cache = ReplyCache("replies.sqlite")
    model = CachedChatModel(LiteLLMChatModel("gpt-4.1"), cache)
    reply = model.complete(messages)        # a request on a miss, none on a hit
    cache.counts()                          # {"hits": 0, "misses": 1}
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from airline_gym.errors import ConfigError
from airline_gym.llm.client import LiteLLMChatModel
from airline_gym.llm.replies import ChatReply

__all__ = [
    "MAX_ROW_CHARS",
    "CachedChatModel",
    "ReplyCache",
    "ReplyCacheError",
    "open_reply_cache",
    "request_key",
]

_FORMAT = "airline-gym reply cache 1"
#: Request fields that do not change the reply: where it is sent, how, and with which key.
_TRANSPORT = frozenset(
    {"api_key", "api_base", "base_url", "timeout", "num_retries", "max_retries", "caching"}
)
#: Parts of field names that may carry credentials: never hashed, never written to the file.
_SECRET_PARTS = ("key", "header", "secret", "password", "auth", "organization")
_BUSY_TIMEOUT_S = 60.0
#: A stored reply longer than this (characters) is treated as damaged: a miss, never decoded.
MAX_ROW_CHARS = 16 * 1024 * 1024
#: Whether a reply is fit to keep and to serve (the default: every well-formed reply is).
Accept = Callable[[ChatReply], bool]
_SELECT = "SELECT substr(reply, 1, ?) FROM replies WHERE key = ?"


class ReplyCacheError(ConfigError):
    """The reply cache file cannot be used (damaged, not a cache, unreadable or locked)."""


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def _content(request: Mapping[str, Any]) -> dict[str, Any]:
    """What of a request decides the reply: no transport fields, nothing that may be a secret."""
    return {
        k: v
        for k, v in request.items()
        if k not in _TRANSPORT
        and not k.lower().endswith("token")  # access_token..., not max_tokens
        and not any(part in k.lower() for part in _SECRET_PARTS)
    }


def request_key(request: Mapping[str, Any]) -> str:
    """The cache key of a request body: SHA-256 of its canonical JSON, transport fields left out.

    >>> a = request_key({"model": "m", "messages": [], "temperature": 0, "api_base": "x"})
    >>> a == request_key({"temperature": 0.0, "messages": [], "model": "m", "timeout": 5})
    True
    """
    text = json.dumps(
        _canonical(_content(request)), sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class ReplyCache:
    """Replies stored by request in the SQLite file ``path`` (created if absent).

    Counts its own ``hits`` and ``misses`` (:meth:`counts`); thread-safe; picklable (a copy
    reopens the file and counts from zero).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0
        self._connect()

    def __repr__(self) -> str:
        return f"ReplyCache({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]

    def __deepcopy__(self, memo: dict[int, Any]) -> ReplyCache:
        return self  # one file, one counter: episodes of a run share it

    # -- the file ---------------------------------------------------------------------------

    def _fail(self, exc: BaseException) -> ReplyCacheError:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        return ReplyCacheError(f"reply cache {self.path}: not usable ({detail})")

    def _connect(self) -> sqlite3.Connection:
        """This process's connection (opened, checked and set up on first use)."""
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        if self.path.is_dir():
            raise ReplyCacheError(f"reply cache {self.path}: is a folder, not a file")
        try:
            connection = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None
            )
            self._check(connection)
        except sqlite3.Error as exc:
            raise self._fail(exc) from None
        self._connection, self._pid = connection, os.getpid()
        return connection

    def _check(self, connection: sqlite3.Connection) -> None:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        if tables and "meta" not in tables:  # checked before anything is written to it
            raise ReplyCacheError(
                f"reply cache {self.path}: an SQLite file of something else, not a reply cache"
            )
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, request TEXT NOT NULL, "
            "reply TEXT NOT NULL, created REAL NOT NULL)"
        )
        connection.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (_FORMAT,))
        row = connection.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        if row is None or row[0] != _FORMAT:
            raise ReplyCacheError(f"reply cache {self.path}: unknown format {row and row[0]!r}")
        connection.execute("SELECT count(*) FROM replies").fetchone()

    def _run(self, sql: str, parameters: tuple[Any, ...]) -> Any:
        with self._lock:
            try:
                return self._connect().execute(sql, parameters).fetchone()
            except sqlite3.Error as exc:
                raise self._fail(exc) from None

    # -- replies ----------------------------------------------------------------------------

    def get(self, request: Mapping[str, Any], accept: Accept | None = None) -> ChatReply | None:
        """The stored reply to ``request`` (a hit), or ``None`` (a miss): also when the row is
        damaged or ``accept`` refuses the stored reply."""
        row = self._run(_SELECT, (MAX_ROW_CHARS + 1, request_key(request)))
        found = None if row is None else _decode(row[0])
        if found is not None and accept is not None and not accept(found):
            found = None
        with self._lock:
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        return found

    def put(
        self, request: Mapping[str, Any], reply: ChatReply, accept: Accept | None = None
    ) -> ChatReply:
        """Store ``reply`` unless a usable one is stored already; the stored one is returned.

        A damaged stored row, or one ``accept`` refuses, is overwritten; a ``reply`` that
        ``accept`` refuses is returned and not stored.
        """
        if accept is not None and not accept(reply):
            return reply
        key = request_key(request)
        stored = json.dumps(
            {"content": reply.content, "tool_calls": reply.tool_calls, "usage": reply.usage}
        )
        body = json.dumps(_content(request), sort_keys=True, default=str)
        self._run(
            "INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?)", (key, body, stored, time.time())
        )
        row = self._run(_SELECT, (MAX_ROW_CHARS + 1, key))
        if row is None:  # pragma: no cover - written just above in the same file
            raise ReplyCacheError(f"reply cache {self.path}: a stored reply vanished")
        if row[0] == stored:
            return reply
        found = _decode(row[0])
        if found is not None and (accept is None or accept(found)):
            return found  # another run stored its reply first: both use that one
        self._run(
            "UPDATE replies SET request = ?, reply = ?, created = ? WHERE key = ?",
            (body, stored, time.time(), key),
        )
        return reply

    def counts(self) -> dict[str, int]:
        """``{"hits": ..., "misses": ...}`` since this object was made."""
        with self._lock:
            return {"hits": self.hits, "misses": self.misses}

    def __len__(self) -> int:
        row = self._run("SELECT count(*) FROM replies", ())
        return int(row[0])

    def close(self) -> None:
        """Close this process's connection (reopened on next use)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def _decode(text: Any) -> ChatReply | None:
    """The reply stored as ``text``, or ``None`` when the row is damaged (any other shape)."""
    if not isinstance(text, str) or len(text) > MAX_ROW_CHARS:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    content, calls, usage = data.get("content"), data.get("tool_calls"), data.get("usage")
    if content is not None and not isinstance(content, str):
        return None
    if calls is None:
        calls = []
    if not isinstance(calls, list) or not all(_is_tool_call(c) for c in calls):
        return None
    if usage is not None and not isinstance(usage, dict):
        return None
    return ChatReply(content=content, tool_calls=calls, usage=usage)


def _is_tool_call(call: Any) -> bool:
    """An OpenAI-format tool call as :func:`~airline_gym.llm.replies.parse_reply` makes them."""
    if not isinstance(call, dict) or not isinstance(call.get("id"), str):
        return False
    function = call.get("function")
    return (
        isinstance(function, dict)
        and isinstance(function.get("name"), str)
        and isinstance(function.get("arguments"), str)
    )


def open_reply_cache(cache: ReplyCache | str | os.PathLike[str] | None) -> ReplyCache | None:
    """``cache`` as a :class:`ReplyCache` (a path is opened and checked); ``None`` stays."""
    if cache is None or isinstance(cache, ReplyCache):
        return cache
    if not isinstance(cache, str | os.PathLike) or not str(cache):
        raise ReplyCacheError(f"a reply cache is a file path, not {cache!r}")
    return ReplyCache(cache)


class CachedChatModel:
    """A :class:`LiteLLMChatModel` whose replies are looked up in a :class:`ReplyCache` first.

    On a hit no request is made and the reply has no cost (nothing was spent); on a miss the
    model is asked and its reply stored. Errors of the model are not stored, nor replies that
    ``accept`` (when given) refuses: asking again then asks the model again.
    """

    def __init__(
        self, model: LiteLLMChatModel, cache: ReplyCache, accept: Accept | None = None
    ) -> None:
        self.model = model
        self.cache = cache
        self.accept = accept

    def request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The request body the key is made from."""
        return self.model.litellm_request(messages, tools)

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """The stored reply, else the model's (then stored)."""
        request = self.request(messages, tools)
        found = self.cache.get(request, self.accept)
        if found is not None:
            return found
        return self.cache.put(request, self.model.complete(messages, tools), self.accept)

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Async :meth:`complete`; the file is read and written off the event loop."""
        request = self.request(messages, tools)
        found = await asyncio.to_thread(self.cache.get, request, self.accept)
        if found is not None:
            return found
        reply = await self.model.acomplete(messages, tools)
        return await asyncio.to_thread(self.cache.put, request, reply, self.accept)
