"""Option helpers shared by the commands that talk to an LLM (eval, demo, play)."""

from __future__ import annotations

import argparse
import os

__all__ = ["add_customer_arguments", "local_api_key"]


def local_api_key(model: str, api_base: str | None, api_key: str | None) -> str | None:
    """A placeholder key for a keyless local OpenAI-compatible server (litellm insists on one)."""
    if api_key or not api_base or os.environ.get("OPENAI_API_KEY"):
        return api_key
    return "EMPTY" if model.startswith(("openai/", "hosted_vllm/")) else api_key


def add_customer_arguments(
    group: argparse._ActionsContainer, flag_prefix: str, user_help: str, model_help: str
) -> None:
    """The customer's options: ``--user``, ``--user-model`` and its server's URL and key
    (``{flag_prefix}api-base``/``{flag_prefix}api-key``: eval's ``--user-``, play's ``--``)."""
    group.add_argument("--user", choices=("scripted", "llm"), help=user_help)
    group.add_argument("--user-model", metavar="MODEL", help=model_help)
    group.add_argument(
        f"{flag_prefix}api-base", metavar="URL", help="OpenAI-compatible URL for the customer"
    )
    group.add_argument(
        f"{flag_prefix}api-key", help="API key for the customer's model (default: from env)"
    )
