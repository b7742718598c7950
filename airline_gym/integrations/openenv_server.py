"""``airline-gym serve``'s app: openenv-core's HTTP server with a session loop that holds up.

openenv-core's :class:`HTTPEnvServer` provides the routes (``/health``, ``/reset``, ``/state``,
``/schema``, ``/metadata``, ``/mcp``) and the session bookkeeping (capacity, one executor thread
per session). Two of its routes are replaced, because against hostile clients they failed:

- ``/ws`` (the WebSocket session, :meth:`AirlineEnvServer.websocket_session`): all of a frame's
  work (its size check, decoding its JSON, reset, step, state, and turning the observation into
  JSON) runs on the session's own thread, so neither a slow step nor a large frame holds the
  event loop, other sessions or ``/health`` (a large frame's JSON is decoded by
  :func:`~airline_gym.integrations.message_limits.decode_json`, which lets other threads run
  meanwhile); a frame that is not a JSON object (array, number, string, ``null``, binary) gets
  an error reply and the session keeps its episode; a frame over ``max_message_bytes`` closes
  the session with code 1009 and a one-line reason; a session with no message for
  ``idle_timeout`` seconds is closed.
- ``POST /step``: over plain HTTP every request gets a fresh env (OpenEnv's stateless API), so
  no step can ever find an episode: it answers 409 with the reason instead of a 500.

An HTTP request body over ``max_message_bytes`` gets 413 and a one-line JSON error.
Sessions created without a WebSocket (``openenv/session/create`` over ``POST /mcp``) are
released once idle for ``idle_timeout`` seconds, so they cannot hold ``max_sessions`` for good;
and one never used since it was made holds its place only while nobody else needs it: when all
places are taken, a new session takes the place of the oldest such one that is at least
:data:`UNUSED_SESSION_GRACE` seconds old.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from dataclasses import dataclass
from typing import Any

from airline_gym.errors import AirlineGymError, ConfigError
from airline_gym.integrations.http_json import OffLoopJSONRoute
from airline_gym.integrations.message_limits import (
    DEFAULT_MAX_MESSAGE_BYTES,
    BodySizeLimit,
    decode_json,
    oversize_reason,
    utf8_size,
)
from airline_gym.integrations.openenv import (
    DEFAULT_MAX_TOOL_CALLS,
    AirlineAction,
    AirlineObservation,
    AirlineOpenEnv,
)
from airline_gym.integrations.openenv_core import (
    Body,
    ConcurrencyConfig,
    EnvironmentFactoryError,
    FastAPI,
    HTTPEnvServer,
    HTTPException,
    ResetRequest,
    ResetResponse,
    SessionCapacityError,
    ValidationError,
    WebSocket,
    WebSocketDisconnect,
    WSErrorCode,
    WSErrorResponse,
    WSObservationResponse,
    WSStateResponse,
    deserialize_action,
    serialize_observation,
)
from airline_gym.llm.time_limit import time_limit

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "UNUSED_SESSION_GRACE",
    "AirlineEnvServer",
    "make_app",
]

log = logging.getLogger(__name__)

#: Seconds a session may go without a message before it is closed (``--idle-timeout``).
DEFAULT_IDLE_TIMEOUT = 600.0
#: What a stateless ``POST /step`` is told (409).
HTTP_STEP_REFUSAL = (
    "no episode to step: over plain HTTP each request gets a fresh env (OpenEnv's stateless API), "
    "so reset and step on one WebSocket session instead (/ws, e.g. openenv's GenericEnvClient)"
)
_MESSAGE_TYPES = "reset, step, state, close"
MESSAGE_TOO_BIG = 1009  # the WebSocket close code for a message over the limit
#: Seconds a session made over HTTP and never used keeps its place against a newcomer (at most
#: ``idle_timeout``): a client that creates one uses it within milliseconds.
UNUSED_SESSION_GRACE = 2.0


def _error(message: str, code: WSErrorCode, **extra: Any) -> str:
    """An OpenEnv error reply as JSON text."""
    return str(WSErrorResponse(data={"message": message, "code": code, **extra}).model_dump_json())


def _frame_message(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(the JSON object a text frame carries, None), or (None, the error reply)."""
    if text is None:
        reason = "a binary frame; send each message as a JSON object in a text frame"
        return None, _error(f"Invalid message: {reason}", WSErrorCode.INVALID_JSON)
    try:
        message = decode_json(text)
    except (ValueError, RecursionError) as exc:
        return None, _error(f"Invalid JSON: {exc}", WSErrorCode.INVALID_JSON)
    if not isinstance(message, dict):
        kinds = {list: "an array", str: "a string", type(None): "null"}
        kind = kinds.get(type(message), "a number")
        reason = f'a message is a JSON object {{"type": ..., "data": ...}}, got {kind}'
        return None, _error(f"Invalid message: {reason}", WSErrorCode.INVALID_JSON)
    return message, None


@dataclass(frozen=True)
class _Ending:
    """How a session ends: a last reply (if any), then a close frame with this code and reason."""

    reply: str | None = None
    code: int = 1000
    reason: str = ""


@dataclass(frozen=True)
class _Answer:
    """What one frame got: the reply to send (None: end the session with ``ending``)."""

    reply: str | None
    kind: str  # the message's type, or "invalid", "unknown", "oversize"
    ending: _Ending | None = None


class AirlineEnvServer(HTTPEnvServer):  # type: ignore[misc,unused-ignore]
    """openenv-core's server with the session loop and idle release described above."""

    def __init__(
        self,
        factory: Any,
        max_sessions: int,
        idle_timeout: float,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout)
        super().__init__(factory, AirlineAction, AirlineObservation, concurrency_config=config)
        self.idle_timeout = idle_timeout
        self.max_message_bytes = max_message_bytes
        self._websocket_sessions: set[str] = set()  # these time out in their own loop
        self._made_at: dict[str, float] = {}  # session -> its last activity when it was made

    # --- the WebSocket session ---------------------------------------------------------------
    async def websocket_session(self, websocket: WebSocket) -> None:
        """One client's session: its own env, one message at a time, until it leaves or idles."""
        await websocket.accept()
        try:
            session_id, env = await self._create_session()
        except SessionCapacityError as exc:
            extra = {"active_sessions": exc.active_sessions, "max_sessions": exc.max_sessions}
            reply = _error(str(exc), WSErrorCode.CAPACITY_REACHED, **extra)
            await self._close(websocket, _Ending(reply))
            return
        except EnvironmentFactoryError as exc:
            reply = _error(str(exc), WSErrorCode.FACTORY_ERROR, factory_name=exc.factory_name)
            await self._close(websocket, _Ending(reply))
            return
        self._websocket_sessions.add(session_id)
        try:
            ending = await self._serve(websocket, session_id, env)
        except (WebSocketDisconnect, OSError):
            ending = None  # the client left mid-reply
        finally:
            self._websocket_sessions.discard(session_id)
            await self._destroy_session(session_id)
        await self._close(websocket, ending)

    async def _close(self, websocket: WebSocket, ending: _Ending | None) -> None:
        ending = ending or _Ending()
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):  # already gone
            if ending.reply is not None:
                await websocket.send_text(ending.reply)
            await websocket.close(ending.code, ending.reason)

    async def _serve(
        self, websocket: WebSocket, session_id: str, env: AirlineOpenEnv
    ) -> _Ending | None:
        """Answer frames until the client closes (None), idles or sends too much (how to end)."""
        while True:
            try:
                async with time_limit(self.idle_timeout):  # never drops a cancel (llm/time_limit)
                    frame = await websocket.receive()
            except asyncio.TimeoutError:  # not the builtin before Python 3.11
                return _Ending(
                    _error(
                        f"session closed: no message for {self.idle_timeout:g} s "
                        "(airline-gym serve --idle-timeout)",
                        WSErrorCode.SESSION_ERROR,
                    )
                )
            if frame["type"] == "websocket.disconnect":
                return None
            # all of a frame's work, decoding included, on the session's thread (not the loop)
            text, binary = frame.get("text"), frame.get("bytes")
            work = functools.partial(self._answer, session_id, env, text, binary)
            answer: _Answer = await self._run_in_session_executor(session_id, work)
            if answer.kind in ("reset", "step", "state"):
                self._update_session_activity(session_id, increment_step=answer.kind == "step")
            if answer.reply is None:  # the client said close, or the frame was over the limit
                return answer.ending
            await websocket.send_text(answer.reply)

    def _answer(
        self, session_id: str, env: AirlineOpenEnv, text: str | None, binary: bytes | None
    ) -> _Answer:
        """One frame's answer (on the session's thread): its size checked, decoded and done."""
        size = utf8_size(text) if text is not None else len(binary or b"")
        if size > self.max_message_bytes:
            reason = oversize_reason("message", size, self.max_message_bytes)
            return _Answer(None, "oversize", _Ending(code=MESSAGE_TOO_BIG, reason=reason))
        message, refusal = _frame_message(text)
        if message is None:
            return _Answer(refusal, "invalid")
        kind, data = message.get("type"), message.get("data", {})
        if kind == "close":
            return _Answer(None, "close")
        if kind not in ("reset", "step", "state"):
            return _Answer(
                _error(
                    f"Unknown message type: {kind!r}; known: {_MESSAGE_TYPES}",
                    WSErrorCode.UNKNOWN_TYPE,
                ),
                "unknown",
            )
        if kind != "state" and not isinstance(data, dict):
            return _Answer(
                _error(f"{kind} data must be a JSON object", WSErrorCode.VALIDATION_ERROR), kind
            )
        try:
            reply = _handle(env, kind, data)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            reply = _error("Invalid message", WSErrorCode.VALIDATION_ERROR, errors=errors)
        except Exception as exc:
            if not isinstance(exc, AirlineGymError):  # not the client's mistake: a bug to see
                log.warning("session %s: %s failed", session_id, kind, exc_info=True)
            reply = _error(str(exc) or type(exc).__name__, WSErrorCode.EXECUTION_ERROR)
        return _Answer(reply, kind)

    # --- sessions made without a WebSocket: unused or idle ------------------------------------
    async def _create_session(self) -> tuple[str, Any]:
        """openenv-core's, but a full server first reclaims a session made and never used."""
        try:
            session_id, env = await super()._create_session()
        except SessionCapacityError:
            if not await self._reclaim_unused():
                raise
            session_id, env = await super()._create_session()
        async with self._session_lock:
            for gone in self._made_at.keys() - self._session_info.keys():
                del self._made_at[gone]  # closed or released meanwhile
            info = self._session_info.get(session_id)
            if info is not None:
                self._made_at[session_id] = info.last_activity_at
        return session_id, env

    async def _reclaim_unused(self) -> bool:
        """Release the oldest session made over HTTP and not used since (older than the grace)."""
        now = time.time()
        grace = min(self.idle_timeout, UNUSED_SESSION_GRACE)
        async with self._session_lock:
            unused = [
                (info.last_activity_at, sid)
                for sid, info in self._session_info.items()
                if sid not in self._websocket_sessions
                and info.last_activity_at == self._made_at.get(sid)
                and now - info.last_activity_at >= grace
            ]
        if not unused:
            return False
        sid = min(unused)[1]
        log.info("session %s released: made over HTTP, never used, and its place needed", sid)
        await self._destroy_session(sid)
        return True

    async def _reap_idle_sessions(self) -> None:
        """Release sessions (made over ``POST /mcp``) idle for ``idle_timeout`` seconds."""
        interval = min(max(self.idle_timeout / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            try:
                await self._release_idle()
            except Exception:  # the reaper must outlive one failed release
                log.warning("releasing idle sessions failed (retried)", exc_info=True)

    async def _release_idle(self) -> None:
        now = time.time()
        async with self._session_lock:
            idle = [
                sid
                for sid, info in self._session_info.items()
                if sid not in self._websocket_sessions
                and now - info.last_activity_at > self.idle_timeout
            ]
        for sid in idle:
            log.info("session %s released after %g s idle", sid, self.idle_timeout)
            await self._destroy_session(sid)

    # --- routes ---------------------------------------------------------------------------
    def register(self, app: FastAPI) -> None:
        """openenv-core's routes on ``app``; ``/ws``, ``POST /reset`` and ``/step`` replaced."""
        self.register_routes(app)
        replaced = {"/ws", "/reset", "/step"}
        kept = [r for r in app.router.routes if getattr(r, "path", None) not in replaced]
        if len(app.router.routes) - len(kept) != len(replaced):  # openenv-core changed shape
            raise RuntimeError(f"openenv-core's app does not have exactly the routes {replaced}")
        app.router.routes[:] = kept
        app.add_api_websocket_route("/ws", self.websocket_session)

        @app.post("/reset", tags=["Environment Control"])
        async def reset(
            request: ResetRequest = Body(default_factory=ResetRequest),  # noqa: B008
        ) -> ResetResponse:
            """A first observation from a fresh env (stateless: nothing can step it after)."""
            kwargs = request.model_dump(exclude_unset=True)
            try:
                observation = await asyncio.to_thread(_stateless_reset, self._env_factory, kwargs)
            except ConfigError as exc:  # e.g. an unknown key or task: the client's mistake
                raise HTTPException(status_code=400, detail=str(exc)) from None
            return ResetResponse(**serialize_observation(observation))

        @app.post("/step", status_code=409, tags=["Environment Control"])
        async def step() -> None:
            """Refused: over plain HTTP there is no episode to step (see /ws)."""
            raise HTTPException(status_code=409, detail=HTTP_STEP_REFUSAL)


def _stateless_reset(factory: Any, kwargs: dict[str, Any]) -> AirlineObservation:
    """``POST /reset``'s work (on a worker thread): a fresh env, reset, then closed."""
    env = factory()
    try:
        return env.reset(**kwargs)  # type: ignore[no-any-return]
    finally:
        env.close()


def _handle(env: AirlineOpenEnv, kind: str, data: dict[str, Any]) -> str:
    """Do one message's work on ``env`` and return the reply as JSON text (on a session thread)."""
    if kind == "state":
        return str(WSStateResponse(data=env.state.model_dump()).model_dump_json())
    if kind == "reset":
        observation = env.reset(**data)
    else:
        observation = env.step(deserialize_action(data, AirlineAction))
    return str(WSObservationResponse(data=serialize_observation(observation)).model_dump_json())


def make_app(
    max_sessions: int = 256,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    **env_kwargs: Any,
) -> FastAPI:
    """The FastAPI app serving :class:`AirlineOpenEnv` sessions built with ``env_kwargs``.

    At most ``max_sessions`` sessions live at once (each one episode at a time); a session with
    no message for ``idle_timeout`` seconds is released; an action may carry at most
    ``max_tool_calls`` tool calls. A WebSocket message over ``max_message_bytes`` closes its
    session (code 1009), an HTTP body over it gets 413. The app can only check a frame the ASGI
    server has read whole: give the server the same limit (uvicorn: ``ws_max_size=``, as
    ``airline-gym serve`` does) so an oversize frame is refused from its header.
    """
    if isinstance(max_message_bytes, bool) or not isinstance(max_message_bytes, int):
        raise ConfigError(f"max_message_bytes must be a whole number, got {max_message_bytes!r}")
    if max_message_bytes < 1:
        raise ConfigError(f"max_message_bytes must be at least 1, got {max_message_bytes}")
    factory = functools.partial(AirlineOpenEnv, max_tool_calls=max_tool_calls, **env_kwargs)
    app = FastAPI(title="airline-gym (OpenEnv)", description=__doc__)
    app.router.route_class = OffLoopJSONRoute  # every route added from here on, ART's too
    AirlineEnvServer(factory, max_sessions, idle_timeout, max_message_bytes).register(app)
    app.add_middleware(BodySizeLimit, max_bytes=max_message_bytes)
    app.state.max_message_bytes = max_message_bytes
    return app
