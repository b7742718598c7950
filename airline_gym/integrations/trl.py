"""TRL ``environment_factory`` adapter: train on the airline domain with ``GRPOTrainer``.

TRL's environment contract: a class with a zero-argument constructor, ``reset(**row) -> str``
(called with every dataset column; the returned text is appended to the row's last prompt
message), public methods that become the model's tools (transformers' ``get_json_schema`` reads
their type hints and Google-style docstrings, in the alphabetical order of their names), and
``get_reward()``, which TRL registers as a reward function by itself (logged as
``rewards/AirlineToolEnv/mean``). TRL ends a rollout at the first reply without a tool call, so
the customer must be reached through a tool: the adapter plays the ``tool-reply`` protocol
(:mod:`airline_gym.env.protocols`), and :class:`AirlineToolEnv` has one method per tool of that
protocol's array (``AirlineEnv.tools``):

- the 14 airline tools and ``done``: the reference's names, descriptions, argument names, types,
  enums and required arguments, in the form transformers gives them
  (:mod:`airline_gym.domain.tool_reply`);
- ``respond_to_user(message)`` (ours), the only way to talk to the customer: it returns the
  customer's reply.

The methods are built so that transformers' schema of each is exactly the protocol's dict for
it: the tools and system prompt a model reads in training are what ``airline-gym eval --protocol
tool-reply`` and ``warm-start --protocol tool-reply`` give it. Each method call is one agent
message with one tool call against an :class:`~airline_gym.env.AirlineEnv`, so the episode, the
customer and the grade (DB check x communicate check) are the env's own. A call after the episode
has ended raises ``ValueError``, which TRL shows the model as the tool result. An episode still
running when the rollout stops scores 0, as the protocol ends one at a reply without a tool call::

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from airline_gym.integrations.trl import dataset_rows, make_environment_factory

    trainer = GRPOTrainer(
        model="Qwen/Qwen3-1.7B",
        train_dataset=Dataset.from_list(dataset_rows(split="train", benchmark="tau3")),
        environment_factory=make_environment_factory(
            benchmark="tau3", user="llm", user_model="gpt-4.1"
        ),
        args=GRPOConfig(max_completion_length=4096, num_generations=8),
    )

``benchmark`` (``"tau2"`` by default, or ``"tau3"``) picks the task set and the customer's
guidelines as one unit; each row carries it, and an env of the other version refuses the row.
No ``reward_funcs`` are needed: the reward is ``get_reward()``, once. The factory is plain data
(picklable), as ``AsyncGRPOTrainer`` requires.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from airline_gym.domain.tool_reply import INSTRUCTIONS, RESPOND_TOOL, tool_reply_form
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.env.protocols import TOOL_REPLY
from airline_gym.errors import ConfigError
from airline_gym.integrations import task_rows
from airline_gym.integrations.task_rows import check_row_benchmark, env_benchmark

__all__ = [
    "PROTOCOL",
    "RESPOND_TOOL",
    "TRL_INSTRUCTIONS",
    "AirlineEnvironmentFactory",
    "AirlineToolEnv",
    "dataset_rows",
    "make_environment_factory",
    "schema_gaps",
    "trl_schema",
]

JSONSchema = dict[str, Any]
#: The protocol TRL needs: the customer through ``respond_to_user``.
PROTOCOL = TOOL_REPLY
#: Appended to the agent's system prompt under the protocol (ours).
TRL_INSTRUCTIONS = INSTRUCTIONS

_SCALARS: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


# --- tool methods from the protocol's schemas ---------------------------------------------------
def _hint(prop: JSONSchema) -> Any:
    """The Python type hint whose transformers schema is ``prop`` (a tool-reply form property)."""
    if "enum" in prop:
        return Literal[tuple(prop["enum"])]  # type: ignore[valid-type,unused-ignore]
    kind = prop.get("type")
    if kind == "array":
        return list[_hint(prop.get("items", {}))]  # type: ignore[misc]
    if kind == "object":
        return dict
    if kind not in _SCALARS:
        raise TypeError(f"no type hint for the JSON schema {json.dumps(prop)[:200]}")
    return _SCALARS[str(kind)]


def _docstring(function: JSONSchema) -> str:
    """A Google-style docstring: the description, then one ``Args:`` line per argument."""
    properties = function.get("parameters", {}).get("properties", {})
    lines = [str(function.get("description", ""))]
    if properties:
        lines += ["", "Args:"]
        lines += [f"    {arg}: {prop.get('description', '')}" for arg, prop in properties.items()]
    return "\n".join(lines)


def _tool_method(function: JSONSchema) -> Callable[..., str]:
    """A method with the tool's typed signature and docstring that runs it in the episode.

    No return hint: transformers would add a ``return`` entry the protocol's schema lacks.
    """
    name = str(function["name"])
    params = function.get("parameters", {})
    required = set(params.get("required", []))
    hints = {arg: _hint(prop) for arg, prop in params.get("properties", {}).items()}
    signature = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(
                arg,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=hint,
                **({} if arg in required else {"default": None}),
            )
            for arg, hint in hints.items()
        ]
    )

    def method(self: AirlineToolEnv, *args: Any, **kwargs: Any) -> str:
        # positional arguments follow the signature; wrong names or types go to the env as they
        # are, which answers with the tool's own error message
        if len(args) > len(hints):
            raise TypeError(
                f"{name}() takes {len(hints)} positional argument(s) "
                f"({', '.join(hints) or 'none'}) but {len(args)} were given"
            )
        for key, value in zip(hints, args, strict=False):
            if key in kwargs:
                raise TypeError(f"{name}() got multiple values for argument {key!r}")
            kwargs[key] = value
        return self._call_tool(name, kwargs)

    method.__name__ = name
    method.__qualname__ = f"AirlineToolEnv.{name}"
    method.__doc__ = _docstring(function)
    method.__annotations__ = dict(hints)
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method


def _install_tools(tools: Sequence[JSONSchema]) -> None:
    """Give :class:`AirlineToolEnv` one method per tool schema (once: the texts are fixed)."""
    if AirlineToolEnv._tool_names:
        return
    names = []
    for schema in tools:
        function = schema["function"]
        setattr(AirlineToolEnv, function["name"], _tool_method(function))
        names.append(function["name"])
    AirlineToolEnv._tool_names = tuple(names)


# --- the environment ------------------------------------------------------------------------------
class AirlineToolEnv:
    """One airline episode at a time, driven through tool methods (see the module docstring).

    Keyword arguments go to :class:`~airline_gym.env.AirlineEnv` (``benchmark``, ``user``,
    ``user_model``, ``user_llm_args``, ``tasks``, ``split``, ``max_steps``, ...) with
    ``protocol="tool-reply"`` (TRL's: any other is refused); the env is built here and reused
    across resets. After each call, ``reward`` holds the episode's reward
    so far (the grade once it has ended), ``info`` the env's latest info dict and ``task_id`` the
    current task. Every public method other than ``reset`` and ``get_reward`` is a tool.
    """

    _tool_names: tuple[str, ...] = ()

    def __init__(self, **env_kwargs: Any) -> None:
        self.env_kwargs = _with_protocol(env_kwargs)
        self.env = AirlineEnv(**self.env_kwargs)
        _install_tools(self.env.tools)
        self._ids = itertools.count()
        self._over = True
        self.reward = 0.0
        self.info: dict[str, Any] = {}
        self.task_id: str | None = None

    def reset(
        self,
        task_id: str | int | None = None,
        seed: int | None = None,
        benchmark: str | None = None,
        **kwargs: Any,
    ) -> str:
        """Start an episode of ``task_id`` (None: drawn from the env's split with ``seed``).

        TRL passes every dataset column; the others (``prompt``, ...) are ignored. A row listed
        for another benchmark version than the env's is refused (``ConfigError``). Returns the
        customer's opening message.
        """
        check_row_benchmark(benchmark, self.env.benchmark)
        options = None if task_id is None else {"task": task_id}
        seed = None if seed is None else int(seed)
        observation, info = self.env.reset(seed=seed, options=options)
        self._ids = itertools.count()
        self.reward = 0.0
        self.info = info
        self.task_id = info["task_id"]
        self._over = self.env.episode is not None and self.env.episode.done
        if self._over:  # the customer failed before saying anything
            self.reward = float(info.get("reward_info", {}).get("reward", 0.0))
            return f"(The customer could not start the conversation: {info.get('error', '')})"
        return "\n".join(m["content"] for m in observation if m.get("role") == "user")

    def get_reward(self) -> float:
        """The episode's reward: its grade once it has ended, 0 while it is still running."""
        return self.reward

    # --- helpers (private: TRL turns public methods into tools) ---------------------------------
    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        call_id = f"call_{next(self._ids)}"
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            ],
        }
        observation = self._step(message)
        return next(
            (m["content"] for m in observation if m.get("tool_call_id") == call_id),
            "(no result)",
        )

    def _step(self, action: dict[str, Any]) -> list[dict[str, Any]]:
        if self.env.episode is None:
            raise ValueError("Call reset() before any tool.")
        if self._over:
            reason = self.info.get("termination_reason")
            raise ValueError(f"The conversation is over ({reason}); no more actions are possible.")
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.info = info
        self._over = terminated or truncated
        self.reward += reward
        return observation


def _with_protocol(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``env_kwargs`` with TRL's protocol; another one is refused in one line."""
    protocol = env_kwargs.get("protocol", PROTOCOL)
    if getattr(protocol, "name", protocol) != PROTOCOL:
        raise ConfigError(
            f"TRL needs the {PROTOCOL!r} protocol (its rollout ends at the first reply without a "
            f"tool call, so the customer is reached through {RESPOND_TOOL}); got {protocol!r}"
        )
    return {**env_kwargs, "protocol": PROTOCOL}


class AirlineEnvironmentFactory:
    """Picklable zero-argument factory of :class:`AirlineToolEnv`: TRL's ``environment_factory``."""

    def __init__(self, **env_kwargs: Any) -> None:
        env_benchmark(env_kwargs)  # a bad benchmark is refused now, not in every rollout
        self.env_kwargs = _with_protocol(env_kwargs)

    def __call__(self) -> AirlineToolEnv:
        """A fresh environment with the stored AirlineEnv arguments."""
        return AirlineToolEnv(**self.env_kwargs)

    def __repr__(self) -> str:
        return f"AirlineEnvironmentFactory({self.env_kwargs!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AirlineEnvironmentFactory) and self.env_kwargs == other.env_kwargs

    __hash__ = None  # type: ignore[assignment]


def make_environment_factory(**env_kwargs: Any) -> AirlineEnvironmentFactory:
    """TRL's ``environment_factory`` for an AirlineEnv built with ``env_kwargs`` (plain data)."""
    return AirlineEnvironmentFactory(**env_kwargs)


#: Rows for ``Dataset.from_list``: ``prompt`` (the protocol's system prompt, the agent's greeting
#: and an empty user turn, which TRL fills with the customer's opening: the env's history at reset),
#: ``task_id``, ``seed`` and ``benchmark`` columns; arguments as
#: :func:`~airline_gym.integrations.task_rows.dataset_rows` (``split``, ``task_ids``, ``repeats``,
#: ``seed``, ``tasks``, ``data_dir``, ``benchmark``).
dataset_rows = functools.partial(task_rows.dataset_rows, "trl")


# --- how close the model's tools come to the reference's ------------------------------------------
def trl_schema(method: Callable[..., Any]) -> JSONSchema:
    """The OpenAI schema transformers builds from one tool method (what TRL renders)."""
    from transformers.utils import get_json_schema

    schema: JSONSchema = get_json_schema(method)
    return schema


def schema_gaps(reference: JSONSchema, ours: JSONSchema) -> list[str]:
    """Where the schema TRL renders (``ours``) differs from the ``reference`` tool schema in the
    form transformers gives it (:func:`~airline_gym.domain.tool_reply.tool_reply_form`: the
    protocol's own), key order included. One line per difference; empty: the same bytes."""
    expected = tool_reply_form(reference)["function"]
    got = ours["function"]
    gaps = [
        f"{key}: {got.get(key)!r} != {expected.get(key)!r}"
        for key in ("name", "description")
        if expected.get(key) != got.get(key)
    ]
    want, have = expected.get("parameters", {}), got.get("parameters", {})
    if want.get("required") != have.get("required"):
        gaps.append(f"required: {have.get('required')} != {want.get('required')}")
    want_props, got_props = want.get("properties", {}), have.get("properties", {})
    if list(want_props) != list(got_props):
        gaps.append(f"arguments: {list(got_props)} != {list(want_props)}")
    for arg in want_props.keys() & got_props.keys():
        if json.dumps(want_props[arg]) != json.dumps(got_props[arg]):
            gaps.append(f"{arg}: {json.dumps(got_props[arg])} != {json.dumps(want_props[arg])}")
    extra = set(got) - {"name", "description", "parameters"}
    if extra:
        gaps.append(f"extra keys: {sorted(extra)}")
    if not gaps and json.dumps(got) != json.dumps(expected):
        gaps.append("the same keys and values in another order")
    return gaps
