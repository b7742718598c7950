"""The ``tool-reply`` protocol's turns: the customer through ``respond_to_user``, TRL's way.

One agent message is played call by call, each call a turn of its own, as TRL's tool loop calls
an environment's methods one by one:

- ``respond_to_user(message)``: the message goes to the customer as the agent's text (a turn in
  the transcript, graded and read as any agent text), and the customer's reply is the call's
  result; a message the env refuses (empty, not text, too long) is an error result, as a refused
  text action is under the other protocols (a step and an error);
- ``done``: ends the episode as ``agent_stop``;
- any other call runs as a tool call;
- a reply with no tool call ends the episode as ``no_tool_call`` (TRL's rollout ends there; an
  episode not ended by ``done`` or the customer scores 0).

Once the episode has ended (the customer stopped, a limit), the message's later calls are not
played, and the last played call's result says so (``(The conversation is over: <reason>.)``;
under TRL the model reads on). The agent's view gets the message as sent (its played calls) and
one tool result per played call; text beside the calls reaches no one (under TRL the
environment never sees it).
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from airline_gym.domain.grading import AGENT_STOP, NO_TOOL_CALL
from airline_gym.domain.tool_reply import RESPOND_TOOL
from airline_gym.env.actions import ActionError, AgentMessage, ToolCall, parse_action

if TYPE_CHECKING:
    from airline_gym.env.episode import Episode, Turn

__all__ = ["reply_turns", "respond_text"]

#: A call's turn: yields when the customer must reply, returns the call's result.
_Call = Generator[None, "str | Exception", str]


def respond_text(arguments: Any) -> str:
    """The text of a ``respond_to_user`` call (:class:`ActionError` saying why there is none)."""
    if isinstance(arguments, str | bytes):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            raise ActionError(f"{RESPOND_TOOL}'s arguments are not JSON") from None
    if not isinstance(arguments, dict) or set(arguments) - {"message"}:
        raise ActionError(f"{RESPOND_TOOL} takes one argument, message (your text)")
    message = parse_action({"role": "assistant", "content": arguments.get("message")}, _no_id)
    return message.content or ""


def _no_id() -> str:
    return ""


def reply_turns(episode: Episode, action: Any) -> Turn:
    """Play ``action`` under ``tool-reply`` (see the module docstring); yields whenever the
    customer must reply and is sent the reply."""
    message = episode.parsed(action)
    if message is None:
        return
    if not message.tool_calls:
        episode._add(message.to_openai())
        episode.step_count += 1
        episode.termination_reason = NO_TOOL_CALL
        episode._check_limits()
        return
    played: list[ToolCall] = []
    results: list[tuple[str, str]] = []
    for call in message.tool_calls:
        if episode.done:
            break
        played.append(call)
        if call.name == RESPOND_TOOL and call.error is None:
            result = yield from _respond(episode, call)
        else:
            episode._apply(AgentMessage(None, (call,)), "transcript")
            result = episode.messages[-1]["content"]
        results.append((call.id, result))
    ending = episode.termination_reason
    if ending is not None and ending != AGENT_STOP:  # the model goes on reading under TRL
        call_id, result = results[-1]
        results[-1] = (call_id, f"{result}\n(The conversation is over: {ending}.)")
    shown = AgentMessage(message.content, tuple(played)).to_openai()
    episode._add(shown, "agent")
    for call_id, content in results:
        episode._add({"role": "tool", "tool_call_id": call_id, "content": content}, "agent")


def _respond(episode: Episode, call: ToolCall) -> _Call:
    """One ``respond_to_user`` call; returns its result (the customer's reply, or why not)."""
    try:
        text = respond_text(call.arguments)
    except ActionError as exc:
        episode.step_count += 1
        episode.num_errors += 1
        episode._check_limits()
        return f"Error: invalid action: {exc}"
    if episode._apply(AgentMessage(text), "transcript"):
        episode._user_said((yield), "transcript")
        last = episode.messages[-1]
        if last["role"] == "user":
            return str(last["content"])
    if episode.termination_reason is None:
        return "(The customer did not reply.)"
    return f"(The customer did not reply: {episode.error_detail or 'the conversation ended'}.)"
