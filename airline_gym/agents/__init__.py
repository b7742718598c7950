"""Ready-made agents for any loop over the env: ``action = agent.act(observation, info)``.

Each agent is told about a new episode with ``reset(info)`` (the ``info`` that ``env.reset``
returned) and then produces one action per step. :class:`LiteLLMAgent` is the reference
tool-calling LLM agent; an agent that cannot act raises :class:`AgentError`, which the evaluation
harness records as the termination reason ``agent_error``. The built-in agents the command line
names (``gold``, ``gold-dialogue``, ``policy``, ``noop``, ``transfer``, ``random``) are in
:mod:`airline_gym.agents.registry`; the observation-only agents of the exploit audit in
:mod:`airline_gym.agents.policy`.
"""

from __future__ import annotations

from airline_gym.agents.base import (
    DONE,
    Action,
    Agent,
    AgentError,
    text_message,
    tool_call_message,
)
from airline_gym.agents.litellm_agent import LiteLLMAgent
from airline_gym.agents.registry import BUILTIN_AGENTS, builtin_agent, describe_builtin
from airline_gym.agents.scripted import (
    GoldAgent,
    NoOpAgent,
    RandomAgent,
    ScriptedAgent,
    TransferAgent,
)

__all__ = [
    "BUILTIN_AGENTS",
    "DONE",
    "Action",
    "Agent",
    "AgentError",
    "GoldAgent",
    "LiteLLMAgent",
    "NoOpAgent",
    "RandomAgent",
    "ScriptedAgent",
    "TransferAgent",
    "builtin_agent",
    "describe_builtin",
    "text_message",
    "tool_call_message",
]
