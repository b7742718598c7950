"""TRL ``environment_factory`` adapter: train on the airline domain with ``GRPOTrainer``.

TRL's environment contract: a class with a zero-argument constructor, ``reset(**row) -> str``
(called with every dataset column; the returned text is appended to the row's last prompt
message), public methods that become the model's tools (transformers' ``get_json_schema`` reads
their type hints and Google-style docstrings), and ``get_reward()``, which TRL registers as a
reward function by itself (logged as ``rewards/AirlineToolEnv/mean``). :class:`AirlineToolEnv`
exposes

- the 14 airline tools and ``done`` as methods generated from the env's own tools array
  (``AirlineEnv.tools``, the reference's schemas): same names, descriptions, argument names,
  types, enums and required arguments;
- ``respond_to_user(message)``, the only way to talk to the customer (it returns the reply),
  because TRL's rollout ends at the first reply without a tool call.

Each method call is one agent message against an :class:`~airline_gym.env.AirlineEnv`, so the
episode, the customer and the grade (DB check x communicate check) are the env's own. A call
after the episode has ended raises ``ValueError``, which TRL shows the model as the tool
result. An episode still running when the rollout stops scores 0, as an unfinished tau2
episode does::

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

What transformers' schema conversion cannot express (:func:`schema_gaps` lists it for the live
schemas): ``title`` keys, ``$defs`` and ``additionalProperties``; list items that are objects
become ``{"type": "object"}`` (their keys, types and descriptions are spelled out at the end
of the argument's description instead); key order inside each property is transformers'.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from airline_gym.env.airline_env import AirlineEnv
from airline_gym.integrations import task_rows
from airline_gym.integrations.task_rows import TRL_INSTRUCTIONS, check_row_benchmark, env_benchmark

__all__ = [
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
RESPOND_TOOL = "respond_to_user"

_NEWLINES = re.compile(r"\s*\n+\s*")  # transformers joins argument lines the same way
_SCALARS: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


# --- tool methods from OpenAI schemas -------------------------------------------------------------
def _resolve(schema: JSONSchema, defs: JSONSchema) -> JSONSchema:
    """An item schema with ``$ref``/``anyOf`` resolved to its first concrete alternative."""
    if "anyOf" in schema:
        schema = schema["anyOf"][0]
    if "$ref" in schema:
        schema = defs[str(schema["$ref"]).rsplit("/", 1)[-1]]
    return schema


def _hint(prop: JSONSchema, defs: JSONSchema) -> Any:
    """The Python type hint whose transformers schema comes closest to ``prop``."""
    if "enum" in prop:
        return Literal[tuple(prop["enum"])]  # type: ignore[valid-type,unused-ignore]
    kind = prop.get("type")
    if kind == "array":
        items = _resolve(prop.get("items", {}), defs)
        return list[_hint(items, defs)]  # type: ignore[misc]
    if kind == "object" or "properties" in prop:
        return dict
    if kind not in _SCALARS:
        raise TypeError(f"no type hint for the JSON schema {json.dumps(prop)[:200]}")
    return _SCALARS[str(kind)]


def _arg_doc(prop: JSONSchema, defs: JSONSchema) -> str:
    """One-line argument text; object list items get their keys spelled out (no other place)."""
    description = _NEWLINES.sub(" ", str(prop.get("description", "")).strip())
    items = _resolve(prop.get("items", {}), defs) if prop.get("type") == "array" else {}
    if items.get("properties"):
        keys = "; ".join(
            f"{key} ({field.get('type', 'any')}) - {str(field.get('description', '')).rstrip('.')}"
            for key, field in items["properties"].items()
        )
        description = f"{description} Each item is an object with these keys: {keys}."
    return description


def _docstring(function: JSONSchema) -> str:
    """A Google-style docstring: the description verbatim, then one ``Args:`` line each."""
    params = function.get("parameters", {})
    defs = params.get("$defs", {})
    lines = [str(function.get("description", "")).strip()]
    if params.get("properties"):
        lines += ["", "Args:"]
        lines += [f"    {k}: {_arg_doc(p, defs)}" for k, p in params["properties"].items()]
    return "\n".join(lines)


def _tool_method(function: JSONSchema) -> Callable[..., str]:
    """A method with the tool's typed signature and docstring that runs it in the episode.

    No return hint: transformers would add a ``return`` entry the reference's schema lacks.
    """
    name = str(function["name"])
    params = function.get("parameters", {})
    defs = params.get("$defs", {})
    required = set(params.get("required", []))
    hints = {arg: _hint(prop, defs) for arg, prop in params.get("properties", {}).items()}
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
    ``user_model``, ``user_llm_args``, ``tasks``, ``split``, ``max_steps``, ...); the env is
    built here and reused across resets. After each call, ``reward`` holds the episode's reward
    so far (the grade once it has ended), ``info`` the env's latest info dict and ``task_id`` the
    current task. Every public method other than ``reset`` and ``get_reward`` is a tool.
    """

    _tool_names: tuple[str, ...] = ()

    def __init__(self, **env_kwargs: Any) -> None:
        self.env_kwargs = dict(env_kwargs)
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

    def respond_to_user(self, message: str) -> str:
        """Send a message to the customer and return the customer's reply.

        Args:
            message: Your message to the customer.
        """
        observation = self._step({"role": "assistant", "content": message})
        replies = [m["content"] for m in observation if m.get("role") == "user"]
        if replies:
            return "\n".join(replies)
        # no reply: the env refused the message (empty, not text, too long: its own words say
        # why, and it counted an error) and/or the episode has just ended
        said = [m["content"] for m in observation if m.get("role") == "system"]
        if self._over:
            said.append(f"(The conversation is over: {self.info.get('termination_reason')}.)")
        return "\n".join(said) or "(The customer did not reply.)"

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


class AirlineEnvironmentFactory:
    """Picklable zero-argument factory of :class:`AirlineToolEnv`: TRL's ``environment_factory``."""

    def __init__(self, **env_kwargs: Any) -> None:
        env_benchmark(env_kwargs)  # a bad benchmark is refused now, not in every rollout
        self.env_kwargs = dict(env_kwargs)

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


#: Rows for ``Dataset.from_list``: ``prompt`` (the agent's system prompt plus
#: :data:`TRL_INSTRUCTIONS` and an empty user turn, which TRL fills with the customer's opening),
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


def _strip(schema: Any, defs: JSONSchema) -> Any:
    """``schema`` without what transformers cannot express; object items become bare objects."""
    if isinstance(schema, list):
        return [_strip(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "anyOf" in schema or "$ref" in schema:
        return {"type": _resolve(schema, defs).get("type", "object")}
    out = {}
    for key, value in schema.items():
        if key in ("title", "$defs", "additionalProperties"):
            continue
        if key == "properties":
            out[key] = {name: _strip(prop, defs) for name, prop in value.items()}
        elif key == "items" and _resolve(value, defs).get("type") == "object":
            out[key] = {"type": "object"}
        else:
            out[key] = _strip(value, defs)
    return out


def schema_gaps(reference: JSONSchema, ours: JSONSchema) -> list[str]:
    """Where the schema TRL renders (``ours``) differs from the ``reference`` tool schema.

    Returns one line per difference beyond the ones transformers cannot avoid (titles,
    ``$defs``, ``additionalProperties``, object list items, key order) and the spelled-out item
    keys at the end of an argument's description. Empty: as close as TRL allows.
    """
    ref_fn, our_fn = reference["function"], ours["function"]
    defs = ref_fn.get("parameters", {}).get("$defs", {})
    expected = _strip(ref_fn, defs)
    got = json.loads(json.dumps(our_fn))
    gaps = []
    for key in ("name", "description"):
        if expected.get(key) != got.get(key):
            gaps.append(f"{key}: {got.get(key)!r} != {expected.get(key)!r}")
    want_params, got_params = expected.get("parameters", {}), got.get("parameters", {})
    if want_params.get("required", []) != got_params.get("required", []):
        gaps.append(f"required: {got_params.get('required')} != {want_params.get('required')}")
    want_props, got_props = want_params.get("properties", {}), got_params.get("properties", {})
    if list(want_props) != list(got_props):
        gaps.append(f"arguments: {list(got_props)} != {list(want_props)}")
    for arg in set(want_props) & set(got_props):
        want, have = dict(want_props[arg]), dict(got_props[arg])
        text = _arg_doc(ref_fn["parameters"]["properties"][arg], defs)
        if have.pop("description", None) != text:
            gaps.append(f"{arg}: description differs")
        want.pop("description", None)
        if want != have:
            gaps.append(f"{arg}: {have} != {want}")
    extra = set(got) - {"name", "description", "parameters"}
    if extra:
        gaps.append(f"extra keys: {sorted(extra)}")
    return gaps
