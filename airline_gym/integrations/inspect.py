"""Inspect adapter: the airline domain as an Inspect task, ``inspect eval airline_gym/airline``.

:func:`airline` is an Inspect ``@task`` (registered under the package's entry point, so the
installed package's task is ``airline_gym/airline``):

- dataset: one sample per ``(task id, seed)`` of a split (or of ``task_ids``), as TRL's and
  verifiers' rows (:func:`~airline_gym.integrations.task_rows.task_seeds`); a later epoch plays
  the sample again with its own seed;
- solver (:func:`airline_agent`): plays the episode with the one episode runner
  (:func:`~airline_gym.harness.runner.arun_episode`) against its own
  :class:`~airline_gym.env.AirlineEnv`; the agent is Inspect's model (``get_model()``), sent the
  env's history and tools each turn; the customer is the scripted one (``user="scripted"``,
  offline) or Inspect's model role ``user`` (``user="model"``: ``--model-role user=...``),
  prompted as the reference's LLM customer. The transcript becomes the sample's messages;
- scorer (:func:`airline_grade`): the env's grade (DB check x communicate check), with the DB
  diff, the communicate checks, the termination reason, steps and tool errors in its metadata.

An episode that ends in ``agent_error`` (the model's call failed) or ``user_error`` (the
customer's call failed) raises, so Inspect counts the sample as an error (and retries it with
``--retry-on-error``) instead of scoring a failure of the infrastructure as a 0.

Inspect's tool schema model is a subset of JSON Schema: it keeps no ``$defs`` or ``title``. The
reference's schemas are sent with every ``$ref`` replaced by its definition (:func:`tool_info`);
names, descriptions, types, enums and required arguments are the reference's. Messages go
through Inspect's own OpenAI conversion (``messages_from_openai``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK
from airline_gym.domain.grading import AGENT_ERROR, USER_ERROR
from airline_gym.domain.tasks import Task as AirlineTask
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import ConfigError, require
from airline_gym.harness.runner import arun_episode
from airline_gym.integrations.episode_summary import episode_summary
from airline_gym.integrations.task_rows import check_row_benchmark, env_benchmark, task_seeds
from airline_gym.llm import ChatReply
from airline_gym.users.llm_user import LLMUser

require("inspect_ai", "inspect", "airline_gym.integrations.inspect")  # names the extra
from inspect_ai import Task, task  # noqa: E402
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    Model,
    ModelOutput,
    get_model,
    messages_from_openai,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr  # noqa: E402
from inspect_ai.solver import Generate, Solver, TaskState, solver  # noqa: E402
from inspect_ai.tool import ToolInfo, ToolParams  # noqa: E402

__all__ = ["InspectChatModel", "InspectUser", "airline", "airline_agent", "airline_grade"]

_SUMMARY = "airline"  # the sample store key of the episode summary
_FAILURES = (AGENT_ERROR, USER_ERROR)


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with every ``$ref`` to ``#/$defs/X`` replaced by that definition."""
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        beside = {k: v for k, v in schema.items() if k != "$ref"}
        return _inline({**defs[ref.removeprefix("#/$defs/")], **beside}, defs)
    return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}


def tool_info(tool: dict[str, Any]) -> ToolInfo:
    """An OpenAI tool schema (the env's ``info["tools"]`` entry) as Inspect's ``ToolInfo``."""
    function = tool["function"]
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    inlined = _inline(parameters, parameters.get("$defs") or {})
    return ToolInfo(
        name=function["name"],
        description=function.get("description") or "",
        parameters=ToolParams.model_validate(inlined),
    )


class InspectChatModel:
    """Our :class:`~airline_gym.llm.ChatModel` over an Inspect ``Model`` (async only)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._tools: tuple[int, list[ToolInfo]] | None = None

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """Not available: Inspect's models are async."""
        raise RuntimeError("Inspect models are async: use acomplete (arun_episode)")

    def _tool_infos(self, tools: list[dict[str, Any]] | None) -> list[ToolInfo]:
        if not tools:
            return []
        if self._tools is None or self._tools[0] != id(tools):  # one conversion per episode
            self._tools = (id(tools), [tool_info(t) for t in tools])
        return self._tools[1]

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ChatReply:
        """The model's next reply to ``messages`` (OpenAI format), with ``tools`` offered."""
        infos = self._tool_infos(tools)
        output = await self.model.generate(
            await messages_from_openai(messages),
            tools=infos,
            tool_choice="auto" if infos else None,
        )
        message = output.message
        calls = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls or []
        ]
        usage = output.usage.model_dump(exclude_none=True) if output.usage else None
        return ChatReply(content=message.text or None, tool_calls=calls, usage=usage)


class InspectAgent:
    """The agent: Inspect's model, sent the env's history and tools at each turn."""

    def __init__(self, model: Model) -> None:
        self.chat_model = InspectChatModel(model)

    def reset(self, info: dict[str, Any]) -> None:
        """Nothing to reset: the history comes with every turn."""

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> dict[str, Any]:
        """Not available: Inspect's models are async."""
        raise RuntimeError("Inspect models are async: play with arun_episode")

    async def aact(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """The model's next assistant message."""
        reply = await self.chat_model.acomplete(info["messages"], info["tools"])
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        return message


class InspectUser(LLMUser):
    """The LLM customer (the reference's prompt, with ``benchmark``'s guidelines) on an Inspect
    ``Model``, e.g. role ``user``."""

    def __init__(self, model: Model, benchmark: str = DEFAULT_BENCHMARK) -> None:
        super().__init__(model=f"inspect:{model}", benchmark=benchmark)
        self._inspect = InspectChatModel(model)
        self.chat_model = self._inspect  # type: ignore[assignment]

    def check_ready(self) -> None:
        """Inspect resolved the model and its credentials already."""

    def reset(self, task: AirlineTask, seed: int | None = None) -> None:
        """Build the customer's prompt for ``task`` (the seed is Inspect's config to set)."""
        super().reset(task, seed)
        self.chat_model = self._inspect  # type: ignore[assignment]


@solver
def airline_agent(
    user: Literal["scripted", "model"] = "scripted",
    protocol: Literal["gym", "leaderboard", "tool-reply"] = "gym",
    max_steps: int = 200,
    max_errors: int = 10,
    tasks: str | None = None,
    benchmark: str = DEFAULT_BENCHMARK,
) -> Solver:
    """Play the sample's episode: Inspect's model as the agent, in its own env of ``benchmark``
    (a sample listed for another version is refused)."""
    if user not in ("scripted", "model"):
        raise ConfigError(f"user must be 'scripted' or 'model' (Inspect's role user), not {user!r}")
    env_benchmark({"benchmark": benchmark, "tasks": tasks})

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        check_row_benchmark(state.metadata.get("benchmark"), benchmark)
        customer: Any = (
            "scripted" if user == "scripted" else InspectUser(get_model(role="user"), benchmark)
        )
        env = AirlineEnv(
            benchmark=benchmark,
            user=customer,
            protocol=protocol,
            tasks=tasks,
            max_steps=max_steps,
            max_errors=max_errors,
        )
        rows, task_id = int(state.metadata["rows"]), state.metadata["task_id"]
        seed = int(state.metadata["seed"]) + rows * (state.epoch - 1)  # each epoch its own
        try:
            result = await arun_episode(env, InspectAgent(get_model()), task_id, seed)
            summary = episode_summary(env, seed)
        finally:
            env.close()
        state.messages = await messages_from_openai(result.messages)
        texts = [m.get("content") for m in result.messages if m["role"] == "assistant"]
        last = next((t for t in reversed(texts) if t), "")
        state.output = ModelOutput.from_content(model=str(get_model()), content=last)
        state.store.set(_SUMMARY, summary)
        if result.termination_reason in _FAILURES:
            ending = result.termination_reason
            raise RuntimeError(f"the episode could not go on ({ending}): {result.error}")
        return state

    return solve


@scorer(metrics=[mean(), stderr()])
def airline_grade() -> Scorer:
    """The env's grade of the episode the solver played (DB check x communicate check)."""

    async def score(state: TaskState, target: Target) -> Score:
        summary = state.store.get(_SUMMARY)
        if summary is None:
            raise ValueError("no airline episode ran for this sample: use the airline_agent solver")
        info = summary["reward_info"]
        return Score(
            value=summary["reward"],
            answer=summary["termination_reason"],
            explanation=info.get("note") or None,
            metadata={
                "task_id": summary["task_id"],
                "seed": summary["seed"],
                "benchmark": summary["benchmark"],
                "termination_reason": summary["termination_reason"],
                "db_match": info.get("db_match"),
                "db_diff": info.get("db_diff"),
                "communicate_checks": info.get("communicate_checks"),
                "steps": summary["steps"],
                "tool_calls": summary["tool_calls"],
                "tool_errors": summary["tool_errors"],
            },
        )

    return score


def _ids(task_ids: str | int | Sequence[str | int] | None) -> list[str | int] | None:
    """``task_ids`` as given in Python or on the command line (``-T task_ids=17,3``)."""
    if task_ids is None:
        return None
    if isinstance(task_ids, str):
        return [t.strip() for t in task_ids.split(",") if t.strip()]
    if isinstance(task_ids, int):
        return [task_ids]
    return list(task_ids)


@task
def airline(
    split: str = "base",
    task_ids: str | int | Sequence[str | int] | None = None,
    user: Literal["scripted", "model"] = "scripted",
    protocol: Literal["gym", "leaderboard", "tool-reply"] = "gym",
    max_steps: int = 200,
    seed: int = 0,
    tasks: str | None = None,
    benchmark: str = DEFAULT_BENCHMARK,
) -> Task:
    """The airline episodes of ``split`` (or ``task_ids``), graded as tau2 grades them.

    ``benchmark`` is ``"tau2"`` (default) or ``"tau3"`` (``-T benchmark=tau3``: tau3's tasks and
    customer guidelines); ``tasks`` a custom tasks.json instead of the benchmark's own.
    ``user="model"`` makes Inspect's model role ``user`` the customer; ``protocol="leaderboard"``
    plays as ``tau2 run`` does (no ``done`` tool).
    """
    benchmark = env_benchmark({"benchmark": benchmark, "tasks": tasks})
    pairs = task_seeds(split, _ids(task_ids), 1, seed, tasks, None, benchmark)
    samples = [
        Sample(
            id=f"{task_id}-{episode_seed}",
            input=f"(airline task {task_id}: the customer opens the conversation)",
            metadata={
                "task_id": task_id,
                "seed": episode_seed,
                "rows": len(pairs),
                "benchmark": benchmark,
            },
        )
        for task_id, episode_seed in pairs
    ]
    return Task(
        dataset=MemoryDataset(samples, name="airline"),
        solver=airline_agent(
            user=user, protocol=protocol, max_steps=max_steps, tasks=tasks, benchmark=benchmark
        ),
        scorer=airline_grade(),
    )
