"""Serve the env over HTTP/WebSocket as an OpenEnv environment (openenv-core's own server).

The same server speaks ART's tau-bench protocol (/scenarios, /environments: see
airline_gym.integrations.tau_bench_server), so ART's art.tau_bench rollout trains on it as is.

Each client session gets its own episode (its own env, DB and customer); at most
--max-sessions live at once, and a session with no message for --idle-timeout seconds is
released. Connect with OpenEnv's GenericEnvClient, TRL's or verifiers' OpenEnv integrations (see
the README). Needs the openenv extra: pip install "airline-gym[openenv]".

  airline-gym serve                                  # 127.0.0.1:8000, scripted customer
  airline-gym serve --port 0                         # any free port (printed once listening)
  airline-gym serve --benchmark tau3                 # tau3's tasks and customer guidelines
  airline-gym serve --port 9000 --max-sessions 512 --idle-timeout 120
  airline-gym serve --max-message-bytes 4194304      # allow frames and bodies up to 4 MiB
  airline-gym serve --max-connections 2048 --header-timeout 5  # connections, request deadline
  airline-gym serve --user-model gpt-4.1             # LLM customer (needs OPENAI_API_KEY)
  airline-gym serve --user-model openai/qwen --user-api-base http://localhost:8001/v1

Bad settings, a customer without credentials and an address that cannot be listened on (port
in use) are refused at start: one line, exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from airline_gym.cli.flags import USER_API_BASE_HELP, USER_MODEL_HELP, check_customer
from airline_gym.cli.options import add_benchmark_arguments, add_protocol_argument
from airline_gym.errors import ConfigError, require

#: serve's way out of a customer without credentials (it has no --user: no --user-model).
SERVE_KEY_HINT = (
    "or pass --user-api-base URL for a local OpenAI-compatible server, or serve the scripted "
    "customer (no --user-model)"
)

#: Defaults shown in --help: the integration's own defaults (a test checks they agree).
IDLE_TIMEOUT = 600.0
MAX_TOOL_CALLS = 32
MAX_MESSAGE_BYTES = 1 << 20
HEADER_TIMEOUT = 10.0
#: --max-message-bytes' range: 1 KiB (a short action) to 1 GiB (each frame is held in memory).
MESSAGE_BYTES_RANGE = (1 << 10, 1 << 30)


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (0 to 65535)")
    return port


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text}")
    return seconds


def byte_count(text: str) -> int:
    """An argparse type: a whole number of bytes within :data:`MESSAGE_BYTES_RANGE`."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of bytes: {text!r}") from None
    low, high = MESSAGE_BYTES_RANGE
    if not low <= count <= high:
        raise argparse.ArgumentTypeError(f"must be {low} to {high} bytes, got {count}")
    return count


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=8000, help="port (default 8000; 0: any free port)"
    )
    parser.add_argument(
        "--max-sessions", type=int, default=256, help="concurrent sessions (default 256)"
    )
    parser.add_argument(
        "--idle-timeout",
        type=positive_seconds,
        default=IDLE_TIMEOUT,
        metavar="SECONDS",
        help=f"release a session after this long without a message (default {IDLE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-tool-calls",
        type=int,
        default=MAX_TOOL_CALLS,
        help="tool calls one action may carry; more get an error observation and run nothing "
        f"(default {MAX_TOOL_CALLS})",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=byte_count,
        default=MAX_MESSAGE_BYTES,
        metavar="N",
        help="largest WebSocket message or HTTP body a client may send; a larger frame closes "
        f"its session (code 1009), a larger body gets 413 (default {MAX_MESSAGE_BYTES}: 1 MiB)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="open connections at most; one more closes the connection that has waited longest "
        "for its request headers (default: the open-file limit less one per session and 64)",
    )
    parser.add_argument(
        "--header-timeout",
        type=positive_seconds,
        default=HEADER_TIMEOUT,
        metavar="SECONDS",
        help="close a connection that takes longer to send a request (headers and body) "
        f"(default {HEADER_TIMEOUT:g})",
    )
    add_benchmark_arguments(parser)  # --benchmark tau2|tau3, --tasks PATH
    parser.add_argument("--split", help="task split drawn from when reset names no task")
    parser.add_argument(
        "--user-model", "--user-llm", dest="user_model", metavar="MODEL", help=USER_MODEL_HELP
    )
    parser.add_argument("--user-api-base", metavar="URL", help=USER_API_BASE_HELP)
    parser.add_argument("--max-steps", type=int, default=200, help="step budget (default 200)")
    parser.add_argument("--max-errors", type=int, default=10, help="tool errors (default 10)")
    add_protocol_argument(parser)


def env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The AirlineEnv arguments every session's env is built with."""
    if args.max_sessions < 1:
        raise ConfigError("--max-sessions must be at least 1")
    if args.max_tool_calls < 1:
        raise ConfigError("--max-tool-calls must be at least 1")
    if args.max_connections is not None and args.max_connections <= args.max_sessions:
        raise ConfigError("--max-connections must be more than --max-sessions")
    kwargs: dict[str, Any] = {
        "benchmark": args.benchmark,
        "tasks": args.tasks,
        "max_steps": args.max_steps,
        "max_errors": args.max_errors,
        "user": "llm" if args.user_model else "scripted",
        "protocol": args.protocol,
    }
    if args.split:
        kwargs["split"] = args.split
    if args.user_model:
        kwargs["user_model"] = args.user_model
        if args.user_api_base:
            kwargs["user_llm_args"] = {"api_base": args.user_api_base}
    return kwargs


@contextlib.contextmanager
def without_module(name: str) -> Iterator[None]:
    """Inside, ``import name`` fails as if it were not installed (unless already imported).

    openenv-core's server package imports gradio, when installed, for an optional web UI this
    server does not offer: about two thirds of its import time (6 s of CPU on a small machine).
    It already does without it when gradio is absent. ``name`` is importable again after.
    """
    blocked = name not in sys.modules
    if blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if blocked:
            del sys.modules[name]


def build_app(args: argparse.Namespace) -> Any:
    """The FastAPI app ``airline-gym serve`` serves; bad settings fail here, in one line.

    Further routes (other protocols over the same env settings) are added to this app.
    """
    kwargs = env_kwargs(args)
    with without_module("gradio"):
        from airline_gym.integrations.openenv import AirlineOpenEnv
        from airline_gym.integrations.openenv_server import make_app

    probe = AirlineOpenEnv(max_tool_calls=args.max_tool_calls, **kwargs)
    try:  # an LLM customer without credentials would fail every session: refuse it now
        check_customer(probe.env.user, SERVE_KEY_HINT)
    finally:
        probe.close()
    app = make_app(
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout,
        max_tool_calls=args.max_tool_calls,
        max_message_bytes=args.max_message_bytes,
        **kwargs,
    )
    from airline_gym.integrations.tau_bench_server import add_tau_bench_routes

    add_tau_bench_routes(app, args.max_sessions, args.idle_timeout, **kwargs)  # ART's protocol
    return app


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (0: any free port), or a one-line ConfigError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:  # in use, not ours to bind, no such interface or name
        reason = exc.strerror or str(exc)
        raise ConfigError(f"cannot listen on {host}:{port}: {reason}") from None


@dataclass
class Serving:
    """A ``uvicorn.Server`` and the socket it serves (bound already: :attr:`url` is real)."""

    server: Any
    sock: socket.socket

    @property
    def url(self) -> str:
        """``http://host:port`` of the bound socket (the port it got for ``--port 0``)."""
        host, port = self.sock.getsockname()[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def run(self) -> None:
        """Serve until ``server.should_exit`` (or Ctrl+C in the main thread)."""
        self.server.run(sockets=[self.sock])


def make_server(args: argparse.Namespace) -> Serving:
    """``airline-gym serve``'s server, listening already; bad settings fail here in one line."""
    app = build_app(args)
    uvicorn = require("uvicorn", "openenv", "airline-gym serve")
    from airline_gym.integrations import connections

    max_connections = args.max_connections or connections.default_max_connections(args.max_sessions)
    sock = connections.GuardedListener(listen(args.host, args.port))
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        ws_max_size=args.max_message_bytes,  # an oversize frame is refused from its header
        http=connections.bounded_http_protocol(max_connections, args.header_timeout),
    )
    connections.quiet_clean_disconnects()  # after Config: it configures uvicorn's loggers
    return Serving(uvicorn.Server(config), sock)


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym serve`` until interrupted."""
    serving = make_server(args)
    print(f"serving airline-gym (OpenEnv) on {serving.url}", flush=True)
    serving.run()
    return 0
