"""Gymnasium spaces for chat messages: what the agent sends and what it observes.

Both are honest: ``contains`` accepts exactly what the env treats as valid, and ``sample`` draws
from the space with the space's own RNG (random text, or calls of real tools with arguments drawn
from their schemas).
"""

from __future__ import annotations

import itertools
import json
import string
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import create_shared_memory

from airline_gym.domain.schemas import done_schema, tool_schemas
from airline_gym.env.actions import ActionError, parse_action
from airline_gym.env.copy_on_read import CopyOnRead
from airline_gym.errors import ConfigError

OBSERVATION_ROLES = ("user", "tool", "system")
_WORDS = (
    "flight",
    "reservation",
    "cancel",
    "refund",
    "baggage",
    "yes",
    "please",
    "thanks",
    "HAT001",
    "mia_li_3668",
    "2024-05-20",
    "economy",
    "business",
    "gift card",
)


def _random_text(rng: np.random.Generator, max_words: int = 8) -> str:
    n = int(rng.integers(1, max_words + 1))
    if rng.random() < 0.2:  # sometimes arbitrary printable characters
        chars = string.ascii_letters + string.digits + string.punctuation + " "
        return "".join(rng.choice(list(chars), size=int(rng.integers(1, 40))))
    return " ".join(str(rng.choice(_WORDS)) for _ in range(n))


def _random_value(
    schema: dict[str, Any],
    rng: np.random.Generator,
    depth: int = 0,
    defs: dict[str, Any] | None = None,
) -> Any:
    defs = schema.get("$defs", defs)
    if "anyOf" in schema:  # the reference's list items: the model first, then any object
        schema = schema["anyOf"][0]
    if "$ref" in schema and defs:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    kind = schema.get("type")
    if "enum" in schema:
        return str(rng.choice(schema["enum"]))
    if kind == "string":
        return _random_text(rng, 2)
    if kind == "integer":
        return int(rng.integers(-5, 500))
    if kind == "array":
        return [
            _random_value(schema["items"], rng, depth + 1, defs)
            for _ in range(int(rng.integers(0, 3)))
        ]
    if kind == "object":
        return {k: _random_value(v, rng, depth + 1, defs) for k, v in schema["properties"].items()}
    return None


class AssistantMessageSpace(gym.Space[Any]):
    """Actions: an assistant message (OpenAI dict, message object or tau2-style string).

    ``contains(x)`` is true exactly when the env can read ``x`` as a message: text for the user
    and/or tool calls (calls to unknown tools or with bad arguments are still messages; the env
    answers them with error tool results).
    """

    def __init__(self, tools: Sequence[dict[str, Any]] | None = None, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        # a CopyOnRead list (the env's tools) is shared unread: the space costs no copy of them
        self.tools = CopyOnRead.of(tools) if tools is not None else [*tool_schemas(), done_schema()]

    @property
    def is_np_flattenable(self) -> bool:
        """Messages cannot be flattened into arrays."""
        return False

    def contains(self, x: Any) -> bool:
        """Whether the env reads ``x`` as a message."""
        ids = itertools.count()
        try:
            parse_action(x, lambda: f"call_{next(ids)}")
        except (ActionError, TypeError, ValueError):
            return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        """A random message: text, or one or two real tool calls with schema-shaped arguments."""
        rng = self.np_random
        if rng.random() < 0.4:
            return {"role": "assistant", "content": _random_text(rng)}
        calls = []
        for i in range(int(rng.integers(1, 3))):
            tool = self.tools[int(rng.integers(len(self.tools)))]["function"]
            arguments = _random_value(tool["parameters"], rng)
            calls.append(
                {
                    "id": f"sample_{i}",
                    "type": "function",
                    "function": {"name": tool["name"], "arguments": json.dumps(arguments)},
                }
            )
        return {"role": "assistant", "content": None, "tool_calls": calls}

    def __repr__(self) -> str:
        return f"AssistantMessageSpace({len(self.tools)} tools)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AssistantMessageSpace) and other.tools == self.tools


class MessageListSpace(gym.Space[list[dict[str, Any]]]):
    """Observations: the new chat messages since the agent's last action.

    Each is ``{"role": "user", "content": str}``, ``{"role": "tool", "tool_call_id": str,
    "content": str}`` or, for an action the env could not read, ``{"role": "system", "content":
    "Error: ..."}``.
    """

    def __init__(self, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Messages cannot be flattened into arrays."""
        return False

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a list of well-formed observation messages."""
        if not isinstance(x, list):
            return False
        for message in x:
            if not isinstance(message, dict) or message.get("role") not in OBSERVATION_ROLES:
                return False
            if not isinstance(message.get("content"), str):
                return False
            allowed = {"role", "content"} | (
                {"tool_call_id"} if message["role"] == "tool" else set()
            )
            if set(message) != allowed or (
                message["role"] == "tool" and not isinstance(message["tool_call_id"], str)
            ):
                return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> list[dict[str, Any]]:
        """A random observation of one to three messages."""
        rng = self.np_random
        out: list[dict[str, Any]] = []
        for i in range(int(rng.integers(1, 4))):
            role = OBSERVATION_ROLES[int(rng.integers(len(OBSERVATION_ROLES)))]
            message: dict[str, Any] = {"role": role, "content": _random_text(rng)}
            if role == "tool":
                message["tool_call_id"] = f"call_{i}"
            out.append(message)
        return out

    def __repr__(self) -> str:
        return "MessageListSpace()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MessageListSpace)


#: Why ``AsyncVectorEnv``'s default (``shared_memory=True``) is refused, and what works.
NO_SHARED_MEMORY = (
    "Airline observations are lists of chat messages, which AsyncVectorEnv cannot put in shared "
    "memory (it holds arrays): pass shared_memory=False (gym.make_vec(..., "
    'vectorization_mode="async", vector_kwargs={"shared_memory": False})), or use '
    'vectorization_mode="sync"'
)


@create_shared_memory.register(MessageListSpace)
def _no_shared_memory(space: MessageListSpace, n: int = 1, ctx: Any = None) -> Any:
    """gymnasium's hook for a space in shared memory: refused in one line naming what works
    (gymnasium's own error does not say how to pass the option through ``make_vec``)."""
    raise ConfigError(NO_SHARED_MEMORY)
