"""verl adapter: an agent loop registered as ``airline_gym``, one airline episode per sample.

verl's ``AgentLoopManager`` runs one agent loop per sample (``run(sampling_params, **row)``) and
trains on the token ids it returns. :class:`AirlineAgentLoop` (``@register("airline_gym")``, or
``examples/verl_agent_loop.yaml`` as ``actor_rollout_ref.rollout.agent.agent_loop_config_path``)
plays the episode the row names (``extra_info.task_id``, ``extra_info.seed``) with the one
episode runner (:func:`~airline_gym.harness.runner.arun_episode`) in an env of its own:

- the prompt is the env's system prompt and history (the customer's opening) rendered with the
  tokenizer's chat template and the env's tools (the reference's schemas), by verl's own
  continuous-token builder;
- each model turn is the token ids verl's server manager generated, appended as they are (never
  re-tokenised) with ``response_mask`` 1 and their logprobs; the decoded text is the env's
  action (Hermes/Qwen ``<tool_call>`` blocks, text for the customer:
  :func:`~airline_gym.integrations.tool_text.parse_reply`);
- tool results and customer turns are appended as the template renders them, ``response_mask``
  0 (no logprobs of the model's);
- ``reward_score`` is the env's grade (DB check x communicate check), so verl's reward function
  is not called; ``num_turns`` counts the episode's messages after the system prompt;
  ``extra_fields["airline"]`` holds the task id, seed, termination reason, steps, tool calls and
  tool errors. A sample whose response budget (``rollout.response_length``) runs out ends as
  ``agent_error`` (graded 0) with the cause.

The loop's config entry takes AirlineEnv's arguments: ``benchmark`` (``"tau2"`` by default, or
``"tau3"``: the task set and the customer's guidelines as one unit; a row listed for the other
version, ``extra_info.benchmark``, is refused), ``user`` (``"scripted"`` by default;
``"llm"`` with ``user_model`` and ``user_llm_args``), ``protocol``, ``max_steps``, ``max_errors``,
``tasks``. :func:`dataset_rows` writes the rows (one per task id and seed).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any
from uuid import uuid4

from airline_gym.agents.base import AgentError
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import ConfigError, require
from airline_gym.harness.runner import arun_episode
from airline_gym.integrations import task_rows
from airline_gym.integrations.episode_summary import episode_summary
from airline_gym.integrations.task_rows import check_row_benchmark, env_benchmark
from airline_gym.integrations.tool_text import parse_reply

require("verl", "verl", "airline_gym.integrations.verl")  # names the extra
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    AgentLoopBase,
    AgentLoopOutput,
    register,
)

__all__ = ["AGENT_NAME", "AirlineAgentLoop", "dataset_rows"]

#: The ``agent_name`` of the rows (and the registered loop).
AGENT_NAME = "airline_gym"


#: verl dataset rows, one per ``(task id, seed)`` (the episodes of the other adapters):
#: ``extra_info`` holds ``task_id``, ``seed`` and ``benchmark``; ``prompt`` is a placeholder (the
#: loop builds the real prompt from the env). Arguments as
#: :func:`~airline_gym.integrations.task_rows.dataset_rows`.
dataset_rows = functools.partial(task_rows.dataset_rows, "verl")


def _template_message(message: Mapping[str, Any], first: bool) -> dict[str, Any]:
    """An env message as the chat template takes it (later env notes become user turns)."""
    role = message["role"]
    if role == "system" and not first:
        role = "user"  # an "Error: invalid action" note from the env
    out: dict[str, Any] = {"role": role, "content": message.get("content") or ""}
    if role == "tool" and message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out


def _assistant_for_template(message: Mapping[str, Any]) -> dict[str, Any]:
    """The parsed reply as the template renders an assistant turn (arguments as objects)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    calls = []
    for call in message.get("tool_calls") or []:
        function = call["function"]
        try:
            arguments = json.loads(function["arguments"])
        except ValueError:
            arguments = function["arguments"]
        calls.append(
            {"type": "function", "function": {"name": function["name"], "arguments": arguments}}
        )
    if calls:
        out["tool_calls"] = calls
    return out


class _TokenAgent:
    """The runner's agent: each turn is one generation by verl's server manager, in tokens."""

    def __init__(self, loop: AirlineAgentLoop, sampling_params: dict[str, Any]) -> None:
        self.loop = loop
        self.sampling_params = sampling_params
        self.request_id = uuid4().hex
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] | None = None
        self.token_ids: list[int] = []
        self.response_mask: list[int] = []
        self.logprobs: list[float] | None = None
        self.generations: list[list[int]] = []

    def reset(self, info: dict[str, Any]) -> None:
        """The prompt is built at the first turn, from the env's history."""

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """Not available: verl's server manager is async."""
        raise RuntimeError("the verl agent is async: play with arun_episode")

    async def _append_context(
        self, observation: list[dict[str, Any]], info: dict[str, Any]
    ) -> None:
        loop = self.loop
        if not self.token_ids:  # the first turn: the prompt
            self.tools = info["tools"]
            self.messages = [_template_message(m, i == 0) for i, m in enumerate(info["messages"])]
            self.token_ids = await loop.ct_build_initial_tokens(self.messages, tools=self.tools)
            return
        previous = list(self.messages)
        self.messages.extend(_template_message(m, False) for m in observation)
        merged, mask, logprobs = await loop.ct_merge_context_msg(
            previous, self.messages, self.token_ids, self.response_mask, self.logprobs, self.tools
        )
        self.token_ids, self.response_mask = merged.token_ids, mask
        if self.logprobs is not None:
            self.logprobs = logprobs or []

    async def aact(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        """Append what the env said, generate the model's turn, return it as the action."""
        loop = self.loop
        await self._append_context(observation, info)
        if len(self.response_mask) >= loop.response_length:
            raise AgentError(
                f"the response budget ran out (response_length {loop.response_length})"
            )
        output = await loop.server_manager.generate(
            request_id=self.request_id,
            prompt_ids=self.token_ids,
            sampling_params=self.sampling_params,
        )
        generated = list(output.token_ids)
        self.generations.append(generated)
        logprobs = list(output.log_probs) if output.log_probs else None
        if logprobs is None:
            self.logprobs = None  # logprobs are kept only while every turn has them
        elif self.logprobs is None:
            self.logprobs = [0.0] * len(self.response_mask)  # the first turn with logprobs
        merged, mask, merged_logprobs = await loop.ct_merge_assistant_token(
            self.token_ids,
            generated,
            self.response_mask,
            self.logprobs,
            assistant_logprobs=logprobs,
        )
        self.token_ids, self.response_mask = merged.token_ids, mask
        if merged_logprobs is not None:
            self.logprobs = merged_logprobs
        reply = parse_reply(loop.tokenizer.decode(generated, skip_special_tokens=True))
        self.messages.append(_assistant_for_template(reply))
        return reply


@register(AGENT_NAME)
class AirlineAgentLoop(AgentLoopBase):
    """One airline episode per sample, in tokens (see the module docstring)."""

    def __init__(
        self,
        *args: Any,
        user: str = "scripted",
        user_model: str | None = None,
        user_llm_args: Mapping[str, Any] | None = None,
        protocol: str = "gym",
        max_steps: int = 200,
        max_errors: int = 10,
        tasks: str | None = None,
        benchmark: str = DEFAULT_BENCHMARK,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("tools", None)  # verl's tool registry: the env brings its own tools
        super().__init__(*args, **kwargs)
        self.env_kwargs: dict[str, Any] = {
            "benchmark": benchmark,
            "user": user,
            "protocol": protocol,
            "max_steps": max_steps,
            "max_errors": max_errors,
            "tasks": tasks,
        }
        if user_model is not None:
            self.env_kwargs["user_model"] = user_model
        if user_llm_args:
            self.env_kwargs["user_llm_args"] = dict(user_llm_args)
        env_benchmark(self.env_kwargs)  # a bad benchmark is refused here, not in every sample
        self.response_length = int(self.rollout_config.response_length)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play the row's episode; the tokens, masks and the env's grade."""
        extra = kwargs.get("extra_info") or {}
        if extra.get("task_id") is None:
            raise ConfigError("an airline_gym row needs extra_info.task_id (see dataset_rows)")
        check_row_benchmark(extra.get("benchmark"), self.env_kwargs["benchmark"])
        seed = None if extra.get("seed") is None else int(extra["seed"])
        env = AirlineEnv(**self.env_kwargs)  # each rollout its own env
        agent = _TokenAgent(self, sampling_params)
        try:
            result = await arun_episode(env, agent, str(extra["task_id"]), seed)
            summary = episode_summary(env, seed)
        finally:
            env.close()
        cut = len(agent.token_ids) - len(agent.response_mask)
        length = self.response_length
        summary.pop("reward_info")
        return AgentLoopOutput(
            prompt_ids=agent.token_ids[:cut],
            response_ids=agent.token_ids[cut:][:length],
            response_mask=agent.response_mask[:length],
            response_logprobs=agent.logprobs[:length] if agent.logprobs else None,
            reward_score=result.reward,
            num_turns=len(result.messages) - 1,
            metrics={},
            extra_fields={"airline": summary, "termination_reason": result.termination_reason},
        )
