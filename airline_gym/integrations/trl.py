"""TRL ``environment_factory`` adapter: train on the airline domain with ``GRPOTrainer``.

TRL's environment contract: a class with a zero-argument constructor, ``reset(**row) -> str``
(called with every dataset column; the returned text is appended to the row's last prompt
message), public methods that become the model's tools (from their type hints and Google-style
docstrings), and optionally ``get_reward()``. :class:`AirlineToolEnv` exposes

- the 14 airline tools as methods with the same names, arguments and descriptions as the
  OpenAI schemas the env gives any other agent (the reference's texts, read from the fetched
  data when the first environment is built; never copied by hand);
- ``respond_to_user(message)``, the only way to talk to the customer (it returns the reply);
- ``done()``, which ends the conversation and grades it.

Each method call is one agent message against an :class:`~airline_gym.env.AirlineEnv`, so the
episode, the customer and the grade (DB check x communicate check) are the env's own. A call
after the episode has ended raises ``ValueError``, which TRL shows the model as the tool
result. An episode still running when the rollout stops scores 0, as an unfinished tau2
episode does::

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from airline_gym.integrations.trl import airline_reward, dataset_rows, make_environment_factory

    trainer = GRPOTrainer(
        model="Qwen/Qwen3-1.7B",
        train_dataset=Dataset.from_list(dataset_rows(split="train")),
        reward_funcs=[airline_reward],
        environment_factory=make_environment_factory(user="llm", user_model="gpt-4.1"),
        args=GRPOConfig(max_completion_length=4096, num_generations=8),
    )

The factory is plain data (picklable), as ``AsyncGRPOTrainer`` requires. TRL releases that
register an environment's ``get_reward()`` as a reward function by themselves need no
:func:`airline_reward` (passing both would count the reward twice); releases that predate that
support list ``get_reward`` among the tools.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from airline_gym.domain.prompts import agent_system_prompt
from airline_gym.domain.schemas import JSONSchema, done_schema, parameters, tool_schemas
from airline_gym.domain.tasks import DEFAULT_TASK_SET, load_task_set
from airline_gym.domain.tools import TOOLS
from airline_gym.env.actions import DONE_TOOL
from airline_gym.env.airline_env import AirlineEnv

__all__ = [
    "TRL_INSTRUCTIONS",
    "AirlineEnvironmentFactory",
    "AirlineToolEnv",
    "airline_reward",
    "dataset_rows",
    "make_environment_factory",
]

#: Appended to the agent's system prompt: how to reach the customer through tools.
TRL_INSTRUCTIONS = (
    "\n\nYou talk to the customer only through the respond_to_user tool: its argument is your "
    "message to the customer and its result is the customer's reply. Use the other tools to "
    "look up and change records. When the conversation is over, call the done tool."
)
_RETURNS = (
    "The tool's result: text, or JSON for records and lists; a failed call returns a message "
    "starting with 'Error:'."
)


def _arg_doc(prop: JSONSchema, defs: JSONSchema) -> str:
    """One-line argument description; list items of an object model get their keys spelled out."""
    description = str(prop.get("description", ""))
    ref = (prop.get("items", {}).get("anyOf") or [{}])[0].get("$ref")
    if ref:
        fields = defs[ref.rsplit("/", 1)[-1]]["properties"]
        keys = "; ".join(
            f"{key} ({field['type']}) - {str(field.get('description', '')).rstrip('.')}"
            for key, field in fields.items()
        )
        description = f"{description} Each item is an object with these keys: {keys}."
    return " ".join(description.split())


def _docstring(schema: JSONSchema) -> str:
    """A Google-style docstring with the texts of one OpenAI tool schema."""
    function = schema["function"]
    params = function["parameters"]
    lines = [" ".join(function["description"].split())]
    if params["properties"]:
        defs = params.get("$defs", {})
        lines += ["", "Args:"]
        lines += [f"    {k}: {_arg_doc(p, defs)}" for k, p in params["properties"].items()]
    lines += ["", "Returns:", f"    {_RETURNS}"]
    return "\n".join(lines)


_DOCS_FILLED = False


def _fill_docstrings(data_dir: Any = None) -> None:
    """Give the tool methods the reference's texts (read once, on the first environment)."""
    global _DOCS_FILLED
    if _DOCS_FILLED:
        return
    for schema in [*tool_schemas(data_dir), done_schema(data_dir)]:
        getattr(AirlineToolEnv, schema["function"]["name"]).__doc__ = _docstring(schema)
    _DOCS_FILLED = True


def _tool_method(name: str) -> Callable[..., str]:
    """A method with the tool's typed signature that runs it in the episode.

    Its docstring (the reference's texts) is filled in by :func:`_fill_docstrings`.
    """
    func = TOOLS[name]
    params = parameters(func)
    signature = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hint)
            for p, hint in params.items()
        ],
        return_annotation=str,
    )

    def method(self: AirlineToolEnv, *args: Any, **kwargs: Any) -> str:
        if args:  # positional arguments follow the signature; anything odd goes to the env
            for key, value in zip(params, args, strict=False):
                kwargs.setdefault(key, value)
        return self._call_tool(name, kwargs)

    method.__name__ = name
    method.__qualname__ = f"AirlineToolEnv.{name}"
    method.__doc__ = f"The airline tool {name}."
    method.__annotations__ = {**params, "return": str}
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method


class AirlineToolEnv:
    """One airline episode at a time, driven through tool methods (see the module docstring).

    Keyword arguments go to :class:`~airline_gym.env.AirlineEnv` (``user``, ``user_model``,
    ``user_llm_args``, ``tasks``, ``split``, ``max_steps``, ...); the env is built on the
    first :meth:`reset` and reused. After each call, ``reward`` holds the episode's reward so
    far (the grade once it has ended), ``info`` the env's latest info dict and ``task_id`` the
    current task. Every public method other than ``reset`` and ``get_reward`` is a tool.
    """

    def __init__(self, **env_kwargs: Any) -> None:
        _fill_docstrings(env_kwargs.get("data_dir"))
        self.env_kwargs = dict(env_kwargs)
        self._env: AirlineEnv | None = None
        self._ids = itertools.count()
        self._over = True
        self.reward = 0.0
        self.info: dict[str, Any] = {}
        self.task_id: str | None = None

    def reset(
        self, task_id: str | int | None = None, seed: int | None = None, **kwargs: Any
    ) -> str:
        """Start an episode of ``task_id`` (None: drawn from the env's split with ``seed``).

        TRL passes every dataset column; the others (``prompt``, ...) are ignored. Returns the
        customer's opening message.
        """
        if self._env is None:
            self._env = AirlineEnv(**self.env_kwargs)
        options = None if task_id is None else {"task": task_id}
        seed = None if seed is None else int(seed)
        observation, info = self._env.reset(seed=seed, options=options)
        self._ids = itertools.count()
        self.reward = 0.0
        self.info = info
        self.task_id = info["task_id"]
        self._over = self._env.episode is not None and self._env.episode.done
        if self._over:  # the customer failed before saying anything
            self.reward = float(info.get("reward_info", {}).get("reward", 0.0))
            return f"(The customer could not start the conversation: {info.get('error', '')})"
        return "\n".join(m["content"] for m in observation if m.get("role") == "user")

    def respond_to_user(self, message: str) -> str:
        """Send a message to the customer and return the customer's reply.

        Args:
            message: Your message to the customer.

        Returns:
            The customer's reply. It contains ###STOP### when the customer ends the conversation.
        """
        observation = self._step({"role": "assistant", "content": message})
        replies = [m["content"] for m in observation if m.get("role") == "user"]
        if replies:
            return "\n".join(replies)
        return "(The conversation is over.)"

    def done(self) -> str:
        """End the conversation (the reference gym's ``done`` text is filled in at run time)."""
        return self._call_tool(DONE_TOOL, {})

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
        if self._env is None:
            raise ValueError("Call reset() before any tool.")
        if self._over:
            reason = self.info.get("termination_reason")
            raise ValueError(f"The conversation is over ({reason}); no more actions are possible.")
        observation, reward, terminated, truncated, info = self._env.step(action)
        self.info = info
        self._over = terminated or truncated
        self.reward += reward
        return observation


for _name in TOOLS:
    setattr(AirlineToolEnv, _name, _tool_method(_name))
del _name


class AirlineEnvironmentFactory:
    """Picklable zero-argument factory of :class:`AirlineToolEnv`: TRL's ``environment_factory``."""

    def __init__(self, **env_kwargs: Any) -> None:
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


def airline_reward(environments: Sequence[AirlineToolEnv], **kwargs: Any) -> list[float]:
    """A TRL reward function reading each environment's reward (``reward_funcs=[...]``)."""
    return [env.get_reward() for env in environments]


def dataset_rows(
    split: str = "train",
    task_ids: Sequence[str | int] | None = None,
    repeats: int = 1,
    seed: int = 0,
    tasks: str = DEFAULT_TASK_SET,
    data_dir: Any = None,
) -> list[dict[str, Any]]:
    """Rows for ``Dataset.from_list``: ``prompt``, ``task_id`` and ``seed`` columns.

    ``prompt`` is the agent's system prompt (plus :data:`TRL_INSTRUCTIONS`) and an empty user
    turn. One row per task of ``split`` (or of ``task_ids``), ``repeats`` times, each with its own
    seed counting from ``seed``. TRL appends the customer's opening message (what
    :meth:`AirlineToolEnv.reset` returns) to the empty user turn.
    """
    task_set = load_task_set(tasks, data_dir)
    if task_ids is None:
        ids = [t.id for t in task_set.split(split)]
    else:
        ids = [task_set[t].id for t in task_ids]
    system = agent_system_prompt(data_dir) + TRL_INSTRUCTIONS
    rows = []
    counter = itertools.count(seed)
    for _ in range(repeats):
        for task_id in ids:
            rows.append(
                {
                    "prompt": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": ""},
                    ],
                    "task_id": task_id,
                    "seed": next(counter),
                }
            )
    return rows
