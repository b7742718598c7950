"""The three named protocols an episode can follow (spec §13.11): how the agent talks and ends.

``gym``
    tau2's gym wrapper (spec §8): the agent is offered the 14 tools plus ``done`` (its schema as
    the reference's ``as_tool(done)`` gives it); calling ``done`` or writing ``###STOP###`` in a
    message ends the episode as ``agent_stop``. The env's default.
``leaderboard``
    ``tau2 run`` with its ``llm_agent`` (spec §5, §7), the protocol of the published τ² pass
    rates: 14 tools and no ``done`` (a call of it is an unknown tool), agent text never ends the
    episode (it runs on to the customer's stop or a limit), the customer's LLM seed is the
    episode's seed itself, and ``info["messages"]`` is the history exactly as the reference
    sends it to litellm: every assistant message carries ``tool_calls`` (``None`` for text),
    each call as ``{"id", "name", "function": {"name", "arguments": json.dumps(args)},
    "type": "function"}`` with the arguments re-serialised, tool results as ``{"role",
    "content", "tool_call_id"}``.

``tool-reply``
    The customer through a tool, as TRL's ``GRPOTrainer`` needs it (it ends a rollout at the first
    reply without a tool call; :mod:`airline_gym.domain.tool_reply`): the tools are the 14 and
    ``done`` in the form TRL renders them, plus ``respond_to_user(message)``, whose result is the
    customer's reply, all sorted by name; the system prompt is the reference's plus
    :data:`~airline_gym.domain.tool_reply.INSTRUCTIONS` (the tool and the instructions are ours).
    Each tool call is played as its own turn, as TRL calls the tools one by one; a call of
    ``respond_to_user`` is an agent message to the customer in the transcript (graded and read
    as such), the customer's reply its tool result in the agent's history. ``done`` ends the
    episode as ``agent_stop``; a reply without a tool call ends it as ``no_tool_call`` (not
    graded: reward 0), where TRL's rollout ends; text beside tool calls reaches no one. Like
    ``gym`` otherwise (seeds drawn by the env, OpenAI-form history).

Only ``leaderboard`` compares with the published numbers. All three send a tool-call-looking
string that does not parse to the tools as an error result (see :mod:`airline_gym.env.actions`),
where the reference's gym sends it to the customer as text.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pickle
from dataclasses import dataclass
from typing import Any

from airline_gym.domain.prompts import agent_system_prompt
from airline_gym.domain.reference_texts import reference_texts
from airline_gym.domain.schemas import JSONSchema, tools_blob
from airline_gym.domain.tool_reply import INSTRUCTIONS, tool_reply_tools
from airline_gym.env.copy_on_read import Shared
from airline_gym.errors import ConfigError

GYM = "gym"
LEADERBOARD = "leaderboard"
TOOL_REPLY = "tool-reply"
PROTOCOLS = (GYM, LEADERBOARD, TOOL_REPLY)

Message = dict[str, Any]


@dataclass(frozen=True)
class Protocol:
    """How an episode talks to its agent (see the module docstring)."""

    name: str
    offers_done: bool
    agent_text_stops: bool
    reference_history: bool
    seed_is_user_seed: bool
    #: The customer is reached only through ``respond_to_user`` (``tool-reply``).
    reply_tool: bool = False

    @property
    def leaderboard_comparable(self) -> bool:
        """Whether runs under this protocol compare with the published pass rates."""
        return self.name == LEADERBOARD

    def system_prompt(self, data_dir: str | os.PathLike[str] | None = None) -> str:
        """The agent's system prompt: the reference's, plus ours under ``tool-reply``."""
        prompt = agent_system_prompt(data_dir)
        return prompt + INSTRUCTIONS if self.reply_tool else prompt

    def tools(self, data_dir: str | os.PathLike[str] | None = None) -> list[JSONSchema]:
        """The tools array offered to the agent (fresh copies)."""
        tools: list[JSONSchema] = pickle.loads(self.tools_blob(data_dir))
        return tools

    def tools_blob(self, data_dir: str | os.PathLike[str] | None = None) -> bytes:
        """The tools array, pickled (immutable, shared; ``pickle.loads`` gives a fresh copy)."""
        blob = tools_blob(reference_texts(data_dir), self.offers_done)
        return _tool_reply_blob(blob) if self.reply_tool else blob

    def shared_tools(self, data_dir: str | os.PathLike[str] | None = None) -> tuple[Shared, ...]:
        """The tools array, one copy per process: never hand it out except through a
        :class:`~airline_gym.env.copy_on_read.CopyOnRead` list."""
        return _shared_tools(self.tools_blob(data_dir))

    def public(self, message: Message) -> Message:
        """The form of a history message in ``info["messages"]`` (a new dict)."""
        if not self.reference_history:
            return dict(message)
        role = message["role"]
        if role == "assistant":
            calls = message.get("tool_calls") or None
            return {
                "role": "assistant",
                "content": message.get("content"),
                "tool_calls": None if calls is None else [_reference_call(c) for c in calls],
            }
        if role == "tool":
            return {
                "role": "tool",
                "content": message["content"],
                "tool_call_id": message["tool_call_id"],
            }
        return {"role": role, "content": message.get("content")}


@functools.cache
def _tool_reply_blob(reference_blob: bytes) -> bytes:
    return pickle.dumps(tool_reply_tools(pickle.loads(reference_blob)), pickle.HIGHEST_PROTOCOL)


@functools.cache
def _shared_tools(blob: bytes) -> tuple[Shared, ...]:
    return tuple(Shared(tool) for tool in pickle.loads(blob))


def _reference_call(call: dict[str, Any]) -> dict[str, Any]:
    """One tool call as tau2's ``to_litellm_messages`` writes it (arguments re-serialised)."""
    function = call["function"]
    name, arguments = function["name"], function["arguments"]
    if isinstance(arguments, str):
        # not JSON (the reference would have crashed): kept as sent
        with contextlib.suppress(ValueError, RecursionError):
            arguments = json.dumps(json.loads(arguments))
    return {
        "id": call["id"],
        "name": name,
        "function": {"name": name, "arguments": arguments},
        "type": "function",
    }


_PROTOCOLS = {
    GYM: Protocol(
        GYM,
        offers_done=True,
        agent_text_stops=True,
        reference_history=False,
        seed_is_user_seed=False,
    ),
    LEADERBOARD: Protocol(
        LEADERBOARD,
        offers_done=False,
        agent_text_stops=False,
        reference_history=True,
        seed_is_user_seed=True,
    ),
    TOOL_REPLY: Protocol(
        TOOL_REPLY,
        offers_done=True,
        agent_text_stops=False,
        reference_history=False,
        seed_is_user_seed=False,
        reply_tool=True,
    ),
}


def get_protocol(protocol: str | Protocol) -> Protocol:
    """The protocol named ``protocol`` (``"gym"``, ``"leaderboard"`` or ``"tool-reply"``)."""
    if isinstance(protocol, Protocol):
        return protocol
    found = _PROTOCOLS.get(protocol) if isinstance(protocol, str) else None
    if found is None:
        raise ConfigError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")
    return found
