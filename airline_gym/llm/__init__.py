"""Chat-model access for agents and the simulated customer, with bounded, explicit retries.

litellm reaches any provider and is imported only when a request first needs it:
``import airline_gym.llm`` is cheap. Retries are ours alone (litellm's and the OpenAI SDK's
are switched off), so a failing endpoint costs at most ``num_retries + 1`` requests.

Modules: :mod:`~airline_gym.llm.client` (the model and its retry loop),
:mod:`~airline_gym.llm.errors` (``LLMError`` and what is retried), :mod:`~airline_gym.llm.replies`
(reply parsing), :mod:`~airline_gym.llm.reply_cache` (replies stored by request, SQLite),
:mod:`~airline_gym.llm.credentials` (keys), :mod:`~airline_gym.llm.litellm_backend`
and :mod:`~airline_gym.llm.background` (the loop blocking calls run on).
"""

from __future__ import annotations

import logging

from airline_gym.llm.client import RESERVED_KWARGS, ChatModel, LiteLLMChatModel
from airline_gym.llm.credentials import check_credentials
from airline_gym.llm.errors import LLMError
from airline_gym.llm.litellm_backend import load_litellm
from airline_gym.llm.replies import ChatReply
from airline_gym.llm.reply_cache import CachedChatModel, ReplyCache, ReplyCacheError

_litellm = load_litellm  # old private name, still used by tests

# Quiet by default: retries (INFO) and final failures (WARNING) are logged under
# "airline_gym.llm.*" and shown only where the application configures logging.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "RESERVED_KWARGS",
    "CachedChatModel",
    "ChatModel",
    "ChatReply",
    "LLMError",
    "LiteLLMChatModel",
    "ReplyCache",
    "ReplyCacheError",
    "check_credentials",
    "load_litellm",
]
