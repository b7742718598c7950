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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from airline_gym.errors import ConfigError
from airline_gym.llm.client import LiteLLMChatModel
from airline_gym.llm.replies import ChatReply

__all__ = ["CachedChatModel", "ReplyCache", "ReplyCacheError", "open_reply_cache", "request_key"]

_FORMAT = "airline-gym reply cache 1"
#: Request fields that do not change the reply: where it is sent, how, and with which key.
_TRANSPORT = frozenset(
    {"api_key", "api_base", "base_url", "timeout", "num_retries", "max_retries", "caching"}
)
#: Parts of field names that may carry credentials: never hashed, never written to the file.
_SECRET_PARTS = ("key", "header", "secret", "password", "auth", "organization")
_BUSY_TIMEOUT_S = 60.0


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

    def get(self, request: Mapping[str, Any]) -> ChatReply | None:
        """The stored reply to ``request`` (a hit), or ``None`` (a miss)."""
        row = self._run("SELECT reply FROM replies WHERE key = ?", (request_key(request),))
        with self._lock:
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
        return None if row is None else _decode(row[0])

    def put(self, request: Mapping[str, Any], reply: ChatReply) -> ChatReply:
        """Store ``reply`` unless another is stored already; the stored one is returned."""
        key = request_key(request)
        stored = json.dumps(
            {"content": reply.content, "tool_calls": reply.tool_calls, "usage": reply.usage}
        )
        body = json.dumps(_content(request), sort_keys=True, default=str)
        self._run(
            "INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?)", (key, body, stored, time.time())
        )
        row = self._run("SELECT reply FROM replies WHERE key = ?", (key,))
        if row is None:  # pragma: no cover - written just above in the same file
            raise ReplyCacheError(f"reply cache {self.path}: a stored reply vanished")
        return reply if row[0] == stored else _decode(row[0])

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


def _decode(text: str) -> ChatReply:
    data = json.loads(text)
    return ChatReply(
        content=data.get("content"),
        tool_calls=list(data.get("tool_calls") or []),
        usage=data.get("usage"),
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
    model is asked and its reply stored. Errors of the model are not stored.
    """

    def __init__(self, model: LiteLLMChatModel, cache: ReplyCache) -> None:
        self.model = model
        self.cache = cache

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
        found = self.cache.get(request)
        if found is not None:
            return found
        return self.cache.put(request, self.model.complete(messages, tools))

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Async :meth:`complete`; the file is read and written off the event loop."""
        request = self.request(messages, tools)
        found = await asyncio.to_thread(self.cache.get, request)
        if found is not None:
            return found
        reply = await self.model.acomplete(messages, tools)
        return await asyncio.to_thread(self.cache.put, request, reply)
