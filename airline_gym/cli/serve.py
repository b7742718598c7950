"""Serve the env over HTTP/WebSocket as an OpenEnv environment (openenv-core's own server).

Each client session gets its own episode (its own env, DB and customer); at most
--max-sessions live at once. Connect with OpenEnv's GenericEnvClient, TRL's or verifiers'
OpenEnv integrations (see the README). Needs the openenv extra: pip install "airline-gym[openenv]".

  airline-gym serve                                  # 127.0.0.1:8000, scripted customer
  airline-gym serve --port 9000 --max-sessions 512
  airline-gym serve --user-model gpt-4.1             # LLM customer (needs OPENAI_API_KEY)
  airline-gym serve --user-model openai/qwen --user-api-base http://localhost:8001/v1
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from airline_gym.errors import ConfigError, require


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--max-sessions", type=int, default=256, help="concurrent sessions (default 256)"
    )
    parser.add_argument("--tasks", default="tau2", help="'tau2' or a path to a tasks.json")
    parser.add_argument("--split", help="task split drawn from when reset names no task")
    parser.add_argument(
        "--user-model", help="litellm model for an LLM customer (default: scripted)"
    )
    parser.add_argument("--user-api-base", help="OpenAI-compatible base URL for the customer")
    parser.add_argument("--max-steps", type=int, default=200, help="step budget (default 200)")
    parser.add_argument("--max-errors", type=int, default=10, help="tool errors (default 10)")


def env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The AirlineEnv arguments every session's env is built with."""
    if args.max_sessions < 1:
        raise ConfigError("--max-sessions must be at least 1")
    kwargs: dict[str, Any] = {
        "tasks": args.tasks,
        "max_steps": args.max_steps,
        "max_errors": args.max_errors,
        "user": "llm" if args.user_model else "scripted",
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


def make_server(args: argparse.Namespace) -> Any:
    """The ``uvicorn.Server`` that ``airline-gym serve`` runs (``--port 0``: any free port).

    Bad settings fail here, in one line, not in every session.
    """
    kwargs = env_kwargs(args)
    uvicorn = require("uvicorn", "openenv", "airline-gym serve")
    with without_module("gradio"):
        from airline_gym.integrations.openenv import (
            AirlineOpenEnv,
            make_app,
            quiet_clean_disconnects,
        )

    AirlineOpenEnv(**kwargs).close()
    app = make_app(max_sessions=args.max_sessions, **kwargs)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    quiet_clean_disconnects()  # after Config: it configures uvicorn's loggers
    return uvicorn.Server(config)


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym serve`` until interrupted."""
    server = make_server(args)
    print(f"serving airline-gym (OpenEnv) on http://{args.host}:{args.port}", flush=True)
    server.run()  # a port already taken: uvicorn logs it and exits with status 3
    return 0
