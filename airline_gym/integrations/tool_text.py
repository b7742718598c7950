"""A model's raw text reply as the env's action: Hermes/Qwen ``<tool_call>`` blocks and plain text.

Trainers that sample text (SkyRL's ``step(action: str)``, verl's decoded token ids) hand the env
what the model wrote. Qwen and Hermes chat templates teach the model to call a tool with a block
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, several per turn. :func:`parse_reply`
turns such a reply into one OpenAI assistant message: every block a tool call (in order), the
text outside the blocks (less any ``<think>...</think>`` reasoning) the message to the customer.

A block that is not a JSON object with a ``name`` still becomes a tool call, one the env answers
with an ``Error: ...`` tool result (it counts as a tool error), never an exception:

>>> message = parse_reply('Checking.<tool_call>{"name": "get_user_details", '
...                       '"arguments": {"user_id": "x"}}</tool_call>')
>>> message["content"], message["tool_calls"][0]["function"]
('Checking.', {'name': 'get_user_details', 'arguments': '{"user_id": "x"}'})
>>> parse_reply("<tool_call>{oops</tool_call>")["tool_calls"][0]["function"]["name"]
'invalid_tool_call'
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["INVALID_CALL", "parse_reply"]

#: The tool name an unreadable block is called as (no such tool: the env answers with an error).
INVALID_CALL = "invalid_tool_call"
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]{1,256})"')


def _call(block: str, index: int) -> dict[str, Any]:
    """One ``<tool_call>`` block's body as an OpenAI tool call."""
    try:
        data = json.loads(block)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("name"), str) and data["name"]:
        arguments = data.get("arguments", data.get("parameters", {}))
        name = data["name"]
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    else:  # unreadable: named when a name can be read, answered with an error either way
        named = _NAME.search(block)
        name = named.group(1) if named and data is None else INVALID_CALL
        text = block.strip()
    function = {"name": name, "arguments": text}
    return {"id": f"call_{index}", "type": "function", "function": function}


def parse_reply(text: str) -> dict[str, Any]:
    """The OpenAI assistant message that the raw model reply ``text`` stands for.

    ``tool_calls`` holds one call per ``<tool_call>`` block (an unclosed last block, as a reply
    cut at its length limit leaves, is read to the end); ``content`` is the remaining text,
    stripped, or ``None`` when nothing else remains.
    """
    calls = [_call(body, i) for i, body in enumerate(_BLOCK.findall(text))]
    rest = _THINK.sub("", _BLOCK.sub("", text)).strip()
    message: dict[str, Any] = {"role": "assistant", "content": rest or None}
    if calls:
        message["tool_calls"] = calls
    return message  # neither calls nor text (only reasoning): the env answers with an error
