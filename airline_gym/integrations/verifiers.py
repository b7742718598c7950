"""verifiers adapter: the airline domain in the shape of verifiers' ``MultiTurnEnv``.

verifiers (Prime Intellect) plays a multi-turn rollout like this (``MultiTurnEnv.rollout``)::

    state = await env.setup_state(init_state(row))
    while not await env.is_completed(state):  # runs every @vf.stop condition
        if first turn: prompt = state["prompt"]
        else: messages = last prompt + last completion
              prompt = messages + await env.env_response(messages, state)
        state["trajectory"].append({"prompt": prompt, "completion": [model reply], ...})
    the rubric scores the state (reward functions get ``state=...``)

:class:`AirlineHooks` implements those hooks over an :class:`~airline_gym.env.AirlineEnv`, with
no verifiers import:

- ``setup_state(state)`` builds and resets the env for the row's ``info`` (``task_id``,
  ``seed``) and appends the greeting and the customer's opening message to ``state["prompt"]``;
- ``env_response(messages, state)`` applies the model's new assistant message(s) and returns
  the new tool results and customer reply (OpenAI message dicts);
- ``airline_episode_over(state)`` is a stop condition (marked as ``@vf.stop(priority=100)``
  would mark it): it applies a pending last message first, so a final ``done`` is graded;
- ``airline_cleanup(state)`` (marked as ``@vf.cleanup``) releases the env.

:func:`airline_reward` is the rubric's reward function: the official reward once the episode
has ended, 0 when the rollout stopped first (``max_turns``, errors), as tau2 scores an
unfinished episode. :class:`AirlineVerifiersEnv` is a standalone host for the hooks (its
``is_completed`` works as verifiers' does), for tests and custom loops; with verifiers
installed, :func:`load_environment` returns a real ``vf.MultiTurnEnv``::

    env = load_environment(split="train", env_kwargs={"user": "llm", "user_model": "gpt-4.1"})
    results = env.evaluate(client, "my-model", num_examples=10, rollouts_per_example=4)

Older verifiers releases used ``env_response(...) -> (messages, state)`` and
``is_completed(messages, state)``; this module follows the current API.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from airline_gym.domain.prompts import agent_system_prompt
from airline_gym.domain.schemas import done_schema, tool_schemas
from airline_gym.domain.tasks import DEFAULT_TASK_SET, load_task_set
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import ConfigError, require

_NEEDS_VERIFIERS = "load_environment() needs verifiers' MultiTurnEnv API (0.1.10)"

__all__ = [
    "AirlineHooks",
    "AirlineVerifiersEnv",
    "airline_reward",
    "dataset_rows",
    "load_environment",
]

State = dict[str, Any]
Messages = list[Any]
_RUN = "airline"  # state key of the live episode (removed by the cleanup)


def _get(message: Any, key: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(key)
    return getattr(message, key, None)


def _conversation(state: State) -> Messages:
    """The last turn's prompt + completion (what the next env_response would see)."""
    trajectory = state.get("trajectory") or []
    if not trajectory:
        return list(state["prompt"])
    return list(trajectory[-1]["prompt"]) + list(trajectory[-1]["completion"])


def _stop(priority: int = 0) -> Any:
    """Mark a method as verifiers' ``@vf.stop(priority=...)`` does."""

    def mark(func: Any) -> Any:
        func.stop = True
        func.stop_priority = priority
        return func

    return mark


def _cleanup(func: Any) -> Any:
    """Mark a method as verifiers' ``@vf.cleanup`` does."""
    func.cleanup = True
    func.cleanup_priority = 0
    func.cleanup_stage = "rollout"
    return func


class AirlineHooks:
    """verifiers ``MultiTurnEnv`` hooks for the airline domain (see the module docstring).

    Reads ``self.env_kwargs`` (AirlineEnv arguments, plain data). Mix into ``vf.MultiTurnEnv``
    (``load_environment`` does) or use :class:`AirlineVerifiersEnv`.
    """

    env_kwargs: dict[str, Any] = {}  # noqa: RUF012 - read-only default, set per instance

    async def setup_state(self, state: State, **kwargs: Any) -> State:
        """Start the episode of ``state["info"]``; the customer's opener joins the prompt."""
        info = state.get("info") or {}
        env = AirlineEnv(**dict(self.env_kwargs))
        task_id = info.get("task_id")
        seed = info.get("seed")
        _, env_info = await env.areset(
            seed=None if seed is None else int(seed),
            options=None if task_id is None else {"task": task_id},
        )
        opening = [dict(m) for m in env_info["messages"][1:]]  # greeting + customer's first turn
        state["prompt"] = [*state["prompt"], *opening]
        if not state.get("oai_tools"):
            state["oai_tools"] = list(env.tools)
        state[_RUN] = {"env": env, "seen": len(state["prompt"]), "pending": [], "total": 0.0}
        state["airline_task_id"] = env_info["task_id"]
        self._record_if_over(state)
        return state

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        """Apply the model's new assistant message(s); return the tool results and the reply."""
        run = state.get(_RUN)
        if run is None:
            return []
        await self._sync(state, list(messages))
        new, run["pending"] = run["pending"], []
        run["seen"] = len(messages) + len(new)
        return new  # type: ignore[no-any-return]

    @_stop(priority=100)
    async def airline_episode_over(self, state: State) -> bool:
        """Stop condition: the episode has ended (a pending last message is applied first)."""
        if state.get(_RUN) is None:
            return "airline_reward" in state
        await self._sync(state, _conversation(state))
        return "airline_reward" in state

    @_cleanup
    async def airline_cleanup(self, state: State) -> None:
        """Release the env; the grade stays in ``state["airline_*"]``."""
        state.pop(_RUN, None)

    # --- helpers --------------------------------------------------------------------------------
    async def _sync(self, state: State, conversation: Messages) -> None:
        """Step the env with every assistant message after the last one applied."""
        run = state[_RUN]
        env: AirlineEnv = run["env"]
        for message in conversation[run["seen"] :]:
            episode = env.episode
            if _get(message, "role") != "assistant" or episode is None or episode.done:
                continue
            observation, reward, _, _, _ = await env.astep(message)
            run["total"] += reward
            run["pending"].extend(dict(m) for m in observation)
        run["seen"] = max(run["seen"], len(conversation))
        self._record_if_over(state)

    @staticmethod
    def _record_if_over(state: State) -> None:
        run = state[_RUN]
        episode = run["env"].episode
        if episode is None or not episode.done or "airline_reward" in state:
            return
        state["airline_reward"] = float(run["total"])  # the step rewards: the grade at the end
        state["airline_termination_reason"] = episode.termination_reason
        state["airline_reward_info"] = episode.grade().to_dict()
        state["airline_num_errors"] = episode.num_errors
        state["airline_steps"] = episode.step_count


def airline_reward(state: State, **kwargs: Any) -> float:
    """Rubric reward function: the episode's reward, 0 if it did not end (e.g. ``max_turns``)."""
    return float(state.get("airline_reward", 0.0))


def dataset_rows(
    split: str = "train",
    task_ids: Sequence[str | int] | None = None,
    repeats: int = 1,
    seed: int = 0,
    tasks: str = DEFAULT_TASK_SET,
    data_dir: Any = None,
) -> list[dict[str, Any]]:
    """verifiers dataset rows: ``prompt`` (the system prompt), ``info``, ``answer``, ``task``.

    One row per task of ``split`` (or of ``task_ids``), ``repeats`` times; ``info`` holds the
    ``task_id`` and a ``seed`` counting from ``seed``; ``example_id`` numbers the rows.
    """
    task_set = load_task_set(tasks, data_dir)
    if task_ids is None:
        ids = [t.id for t in task_set.split(split)]
    else:
        ids = [task_set[t].id for t in task_ids]
    system = agent_system_prompt(data_dir)
    counter = itertools.count(seed)
    rows: list[dict[str, Any]] = []
    for _ in range(repeats):
        for task_id in ids:
            rows.append(
                {
                    "prompt": [{"role": "system", "content": system}],
                    "info": {"task_id": task_id, "seed": next(counter)},
                    "answer": "",
                    "task": "airline",
                    "example_id": len(rows),
                }
            )
    return rows


class AirlineVerifiersEnv(AirlineHooks):
    """A standalone host of :class:`AirlineHooks` with verifiers' ``is_completed`` semantics."""

    def __init__(self, env_kwargs: Mapping[str, Any] | None = None, max_turns: int = -1) -> None:
        self.env_kwargs = dict(env_kwargs or {})
        self.max_turns = max_turns
        self.oai_tools = [*tool_schemas(), done_schema()]

    @_stop()
    async def max_turns_reached(self, state: State) -> bool:
        """verifiers' built-in stop condition: ``max_turns`` model replies (if positive)."""
        return 0 < self.max_turns <= len(state.get("trajectory") or [])

    async def is_completed(self, state: State, **kwargs: Any) -> bool:
        """Run the stop conditions by priority; on the first hit record it, render, clean up."""
        for condition in _marked(self, "stop"):
            if await condition(state):
                state["is_completed"] = True
                state["stop_condition"] = condition.__name__
                conversation = _conversation(state)
                state["completion"] = conversation[len(state["prompt"]) :]
                for handler in _marked(self, "cleanup"):
                    await handler(state)
                return True
        return False


def _marked(obj: Any, attr: str) -> list[Any]:
    methods = [m for _, m in inspect.getmembers(obj, inspect.ismethod) if hasattr(m, attr)]
    return sorted(methods, key=lambda m: (-getattr(m, f"{attr}_priority", 0), m.__name__))


@cache
def _verifiers_env_class() -> type:
    import verifiers as vf

    return type("AirlineMultiTurnEnv", (AirlineHooks, vf.MultiTurnEnv), {})


def load_environment(
    split: str = "train",
    task_ids: Sequence[str | int] | None = None,
    repeats: int = 1,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    max_turns: int = -1,
    **kwargs: Any,
) -> Any:
    """A ``vf.MultiTurnEnv`` for the airline domain (needs ``verifiers`` and ``datasets``).

    ``env_kwargs`` go to every AirlineEnv (``user``, ``user_model``, ``user_llm_args``,
    ``tasks``, ...); other keyword arguments go to ``vf.MultiTurnEnv``.
    """
    try:
        import verifiers as vf
    except ImportError:
        raise ConfigError(_NEEDS_VERIFIERS + ": pip install 'verifiers==0.1.10'") from None
    if not hasattr(vf, "MultiTurnEnv"):  # verifiers >= 0.4 has only the verifiers.v1 API
        version = getattr(vf, "__version__", "?")
        raise ConfigError(f"{_NEEDS_VERIFIERS}; verifiers {version} has only verifiers.v1")
    Dataset = require("datasets", "trl", "load_environment()").Dataset

    env_kwargs = dict(env_kwargs or {})
    tasks = env_kwargs.get("tasks", DEFAULT_TASK_SET)
    rows = dataset_rows(split, task_ids, repeats, seed, tasks, env_kwargs.get("data_dir"))
    return _verifiers_env_class()(
        dataset=Dataset.from_list(rows),
        rubric=vf.Rubric(funcs=[airline_reward], weights=[1.0]),
        oai_tools=[*tool_schemas(), done_schema()],
        env_kwargs=env_kwargs,
        max_turns=max_turns,
        **kwargs,
    )
