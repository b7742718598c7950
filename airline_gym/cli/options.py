"""Option helpers shared by the commands that talk to an LLM (eval, demo, play)."""

from __future__ import annotations

import os

__all__ = ["local_api_key"]


def local_api_key(model: str, api_base: str | None, api_key: str | None) -> str | None:
    """A placeholder key for a keyless local OpenAI-compatible server (litellm insists on one)."""
    if api_key or not api_base or os.environ.get("OPENAI_API_KEY"):
        return api_key
    return "EMPTY" if model.startswith(("openai/", "hosted_vllm/")) else api_key
