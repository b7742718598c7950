"""Export finished episodes as JSON Lines: one OpenAI-format conversation per line.

Each record holds the conversation (``messages``, system prompt first), the tool schemas it
was played with (``tools``) and the outcome (``reward``, ``task_id``, ``termination_reason``,
``seed``, ``num_errors``, ``steps``), plus ``advantage``/``group_id`` when given. Tool-call
``arguments`` are JSON objects, the form chat templates expect (Qwen2.5's and Llama 3.1's write
``arguments | tojson``, so a JSON string would reach the model double-encoded; Qwen3's takes
either); arguments a model sent that are not a JSON object stay the string it sent. ``content``
is a string or null. A file loads with Hugging Face ``datasets`` (5 or later reads the varying
argument objects as its ``Json`` type, each row's own keys) and serves directly as a TRL
conversational dataset (``messages`` + ``tools`` columns)::

    from airline_gym.harness.export import write_jsonl
    write_jsonl(results, "rollouts.jsonl")  # EpisodeResult list (harness.runner)

    from airline_gym.harness.export import load_jsonl
    ds = load_jsonl("rollouts.jsonl")  # a datasets.Dataset (the trl extra)

:func:`load_jsonl` loads such a file with ``messages`` and ``tools`` typed as datasets' ``Json``
(each row keeps its own argument keys): ``load_dataset("json", ...)`` infers the types from the
data, and where the calls of a file share keys it merges them into one struct, giving every call
the others' keys as nulls, which the chat template then renders as arguments the agent never
passed (TRL's ``remove_none_values`` is its after-the-fact fix).

:func:`group_advantages` computes GRPO/RLOO advantages from the terminal rewards of groups of
rollouts of the same task.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from airline_gym.errors import ConfigError, require
from airline_gym.harness.results.io import encode, write_lines_atomic
from airline_gym.harness.runner import EpisodeResult

__all__ = ["episode_record", "group_advantages", "load_jsonl", "normalize_messages", "write_jsonl"]

#: Added to the group standard deviation in GRPO advantages (TRL's value).
GRPO_EPS = 1e-4


def _arguments(arguments: Any) -> Any:
    """A call's arguments as a JSON object when they are one (a string that does not parse to
    an object stays as sent)."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments
        return parsed if isinstance(parsed, dict) else arguments
    try:
        return json.loads(json.dumps(arguments))  # plain JSON data, a copy
    except (TypeError, ValueError, RecursionError):  # not JSON data: its text, as sent
        return str(arguments)


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = _arguments(function.get("arguments"))
    return {
        "id": str(call.get("id") or ""),
        "type": "function",
        "function": {"name": str(function.get("name") or ""), "arguments": arguments},
    }


def _content(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # OpenAI content parts
        return "".join(
            str(p.get("text") or "") if isinstance(p, Mapping) else str(p) for p in value
        )
    return str(value)


def normalize_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Canonical OpenAI chat messages with the same field types everywhere.

    Every message has ``role`` and ``content`` (a string or ``None``); assistant messages that
    call tools carry ``tool_calls`` (``arguments`` as JSON objects, see the module docstring),
    tool results carry ``tool_call_id``. Other keys are dropped.
    """
    out = []
    for message in messages:
        record: dict[str, Any] = {
            "role": str(message.get("role")),
            "content": _content(message.get("content")),
        }
        if message.get("tool_calls"):
            record["tool_calls"] = [_tool_call(c) for c in message["tool_calls"]]
        if message.get("role") == "tool":
            record["tool_call_id"] = str(message.get("tool_call_id") or "")
        out.append(record)
    return out


def episode_record(
    result: EpisodeResult,
    *,
    advantage: float | None = None,
    group_id: str | None = None,
) -> dict[str, Any]:
    """One episode as a JSON-ready dict (see the module docstring for the fields)."""
    record: dict[str, Any] = {
        "messages": normalize_messages(result.messages),
        "tools": [dict(t) for t in result.tools],
        "reward": float(result.reward),
        "task_id": str(result.task_id),
        "termination_reason": str(result.termination_reason),
        "seed": None if result.seed is None else int(result.seed),
        "num_errors": int(result.num_errors),
        "steps": int(result.steps),
    }
    if advantage is not None:
        record["advantage"] = float(advantage)
    if group_id is not None:
        record["group_id"] = str(group_id)
    return record


def write_jsonl(
    results: Iterable[EpisodeResult | Mapping[str, Any]],
    path: str | os.PathLike[str],
    *,
    advantages: Sequence[float] | None = None,
    group_ids: Sequence[str] | None = None,
) -> int:
    """Write one JSON object per episode to ``path``; returns the number of lines written.

    ``results`` may mix :class:`EpisodeResult` objects and records made by
    :func:`episode_record`. ``advantages``/``group_ids``, when given, align with ``results``.
    The file is replaced at once (temp file, then rename): if a record cannot be written, the
    previous content of ``path`` is kept. Lone surrogates in model text are written as JSON
    escapes (they read back unchanged).
    """
    items = list(results)
    for name, extra in (("advantages", advantages), ("group_ids", group_ids)):
        if extra is not None and len(extra) != len(items):
            raise ConfigError(f"{name} has {len(extra)} entries for {len(items)} results")

    def lines() -> Iterable[str]:
        for i, item in enumerate(items):
            record = episode_record(item) if isinstance(item, EpisodeResult) else dict(item)
            if advantages is not None:
                record["advantage"] = float(advantages[i])
            if group_ids is not None:
                record["group_id"] = str(group_ids[i])
            yield encode(record) + "\n"

    write_lines_atomic(path, lines())
    return len(items)


def load_jsonl(path: str | os.PathLike[str]) -> Any:
    """The rows of a file :func:`write_jsonl` wrote as a ``datasets.Dataset`` whose ``messages``
    and ``tools`` are datasets' ``Json`` type: each row's messages and tool schemas come back
    exactly as written (keys, key order, no added nulls). Needs ``datasets`` (the trl extra)."""
    datasets = require("datasets", "trl", "loading training rows")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    kinds = {bool: "bool", int: "int64", float: "float64", str: "string"}
    features: dict[str, Any] = {}
    for row in rows:
        for key, value in row.items():
            if key in ("messages", "tools"):
                features[key] = datasets.List(datasets.Json())
            elif key not in features and value is not None:
                kind = kinds.get(type(value))
                features[key] = datasets.Value(kind) if kind else datasets.Json()
    for row in rows:
        for key in features:
            row.setdefault(key, None)
    return datasets.Dataset.from_list(rows, features=datasets.Features(features))


def group_advantages(
    rewards: Sequence[float],
    groups: Sequence[Hashable],
    method: str = "grpo",
    eps: float = GRPO_EPS,
) -> list[float]:
    """Group-relative advantages of terminal rewards; ``groups[i]`` names the group of item i.

    ``"grpo"``: ``(r - mean) / (std + eps)`` with the sample standard deviation of the group
    (as TRL's GRPOTrainer and verl compute it). ``"rloo"``: ``r - mean of the others``. A group
    of one gets advantage 0.
    """
    if len(rewards) != len(groups):
        raise ConfigError("rewards and groups must have the same length")
    if method not in ("grpo", "rloo"):
        raise ConfigError(f"unknown advantage method {method!r}; use 'grpo' or 'rloo'")
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, group in enumerate(groups):
        members[group].append(i)
    out = [0.0] * len(rewards)
    for indices in members.values():
        values = [float(rewards[i]) for i in indices]
        n = len(values)
        if n < 2:
            continue
        total = sum(values)
        mean = total / n
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
        for i, value in zip(indices, values, strict=True):
            if method == "grpo":
                out[i] = (value - mean) / (std + eps)
            else:
                out[i] = value - (total - value) / (n - 1)
    return out
