"""The agent contract and message helpers shared by every agent."""

from __future__ import annotations

import json
from typing import Any, Protocol

from airline_gym.env.actions import DONE_TOOL
from airline_gym.errors import AgentError

__all__ = ["Action", "Agent", "AgentError", "offers_tool", "text_message", "tool_call_message"]

Action = dict[str, Any]


class Agent(Protocol):
    """Anything that can play the agent side of an episode."""

    def reset(self, info: dict[str, Any]) -> None:
        """A new episode begins; ``info`` is what ``env.reset`` returned."""

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """The next action."""


def tool_call_message(name: str, arguments: dict[str, Any], call_id: str) -> Action:
    """An assistant message with one tool call, in OpenAI format."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def text_message(text: str) -> Action:
    """An assistant message to the user."""
    return {"role": "assistant", "content": text}


#: The gym protocol's ``done`` call.
DONE = tool_call_message(DONE_TOOL, {}, "done")


def offers_tool(info: dict[str, Any], name: str, default: bool) -> bool:
    """Whether the env's tools (``info["tools"]``) include ``name`` (``default``: no tools)."""
    tools = info.get("tools") if isinstance(info, dict) else None
    if not isinstance(tools, list):
        return default
    return any((t.get("function") or {}).get("name") == name for t in tools)
