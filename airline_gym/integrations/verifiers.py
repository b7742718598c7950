"""verifiers adapter: the airline domain as a ``verifiers.v1`` taskset, harness and env.

verifiers 0.4 (``import verifiers.v1 as vf``) splits a rollout into a *task* (its data, setup,
scoring), a *harness* (the program the model runs in; every model call goes through verifiers'
interception endpoint, which records the trace) and an *env* (the control flow between agents).
Here:

- :class:`AirlineTaskset` loads one :class:`AirlineTask` per ``(task id, seed)`` of a split
  (:func:`~airline_gym.integrations.task_rows.task_seeds`, as TRL's rows) of its ``benchmark``
  (``"tau2"`` by default, or ``"tau3"``: the task set and the customer's guidelines as one unit,
  kept in each task's data); its config holds the customer (``task.user``: ``"scripted"``,
  offline, by default; ``"llm"`` with ``user_model``).
- :meth:`AirlineTask.setup` builds one isolated :class:`~airline_gym.env.AirlineEnv` per
  rollout; :meth:`AirlineTask.grade` is the reward (the env's grade, exactly) and
  :meth:`AirlineTask.episode_metrics` the metrics beside it (steps, tool calls, tool errors, a
  0/1 metric per termination reason). ``trace.info["airline"]`` keeps the termination reason,
  the grade's details and the error, if any.
- :class:`AirlineHarness` plays the episode in-process with the one episode loop
  (:func:`~airline_gym.harness.runner.arun_episode`) and a
  :class:`~airline_gym.agents.LiteLLMAgent` pointed at the interception endpoint: each request
  carries the env's history (customer turns as user messages, tool results as tool messages)
  and the env's tools array (``info["tools"]``, the reference's schemas); the model's reply is
  the env's next action.
- :class:`AirlineEpisodes` is the single-agent env with the local ``subprocess`` runtime as its
  default (the harness runs no code; verifiers' default runtime is a remote sandbox).

verifiers finds them by the taskset id ``airline-gym-verifiers`` (:data:`PLUGIN_ID`): its
loader imports the top-level module ``airline_gym_verifiers``, which re-exports these classes.
``vf-eval airline-gym-verifiers -m MODEL`` and prime-rl's env id use it; in Python,
:func:`load_environment` returns the same ``vf.Env``.

An episode that ends in ``agent_error`` (the model's call failed, or its reply was unusable) or
``user_error`` (the LLM customer's call failed) fails the rollout with that cause, as a
``HarnessError`` or a ``TaskError``, so verifiers' retries and error counts see it, unless a
verifiers limit (``max_turns``, token caps, a stop) refused the model's call: then the episode is
graded where it stopped (0), as is one cut short by the rollout timeout. The model is sampled at
the reference agent's temperature 0 unless verifiers' sampling config sets one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, PrivateAttr

from airline_gym.agents.litellm_agent import LiteLLMAgent
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK
from airline_gym.domain.grading import AGENT_ERROR, USER_ERROR
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import require
from airline_gym.harness.runner import arun_episode
from airline_gym.integrations.episode_summary import episode_metrics as summary_metrics
from airline_gym.integrations.episode_summary import episode_summary
from airline_gym.integrations.task_rows import env_benchmark, task_seeds

require("verifiers.v1", "verifiers", "airline_gym.integrations.verifiers")  # names the extra
import verifiers.v1 as vf  # noqa: E402 - after the check, so a missing extra reads clearly

__all__ = [
    "PLUGIN_ID",
    "AirlineEnvConfig",
    "AirlineEpisodes",
    "AirlineHarness",
    "AirlineState",
    "AirlineTask",
    "AirlineTaskConfig",
    "AirlineTaskData",
    "AirlineTaskset",
    "AirlineTasksetConfig",
    "episode_summary",
    "load_environment",
]

#: The taskset id verifiers loads (module ``airline_gym_verifiers``).
PLUGIN_ID = "airline-gym-verifiers"
_INFO = "airline"  # the trace.info key of the episode summary
#: Endings that are failures, not grades: the model's call (or reply) failed, the customer's did.
_FAILURES = {AGENT_ERROR: vf.HarnessError, USER_ERROR: vf.TaskError}


class AirlineTaskData(vf.TaskData):
    """One episode: ``id`` is the task id, ``seed`` the reset seed, ``benchmark`` the version
    it was listed for, ``tasks`` a custom task set (None: the benchmark's own)."""

    seed: int = 0
    benchmark: str = DEFAULT_BENCHMARK
    tasks: str | None = None


class AirlineTaskConfig(vf.TaskConfig):
    """The customer and the limits (``--env.taskset.task.*``): AirlineEnv's arguments."""

    user: Literal["scripted", "llm"] = "scripted"
    user_model: str | None = None
    """litellm model of the LLM customer (default gpt-4.1, or $AIRLINE_GYM_USER_MODEL)."""
    user_llm_args: dict[str, Any] = Field(default_factory=dict)
    """litellm arguments of the LLM customer (api_base, api_key, timeout, ...)."""
    protocol: Literal["gym", "leaderboard", "tool-reply"] = "gym"
    max_steps: int = Field(200, ge=1)
    max_errors: int = Field(10, ge=1)


class AirlineTasksetConfig(vf.TasksetConfig):
    """Which episodes load (``--env.taskset.*``): as TRL's ``dataset_rows`` arguments."""

    split: str = "train"
    task_ids: list[str] | None = None
    """Task ids to load instead of a split."""
    repeats: int = Field(1, ge=1)
    seed: int = 0
    """The first episode's seed; each further task or repeat counts up from it."""
    benchmark: str = DEFAULT_BENCHMARK
    """The benchmark version: "tau2" (default) or "tau3" (its tasks and customer guidelines)."""
    tasks: str | None = None
    """A path to a custom tasks.json (default: the benchmark's own tasks)."""
    task: AirlineTaskConfig = AirlineTaskConfig()


class AirlineState(vf.State):
    """The rollout's live env (set by the task's setup, released by its finalize)."""

    _env: AirlineEnv | None = PrivateAttr(None)


def _summary(trace: Any) -> dict[str, Any]:
    summary = trace.info.get(_INFO)
    if summary is None:
        raise ValueError(
            "no airline episode ran in this rollout: AirlineTask needs the airline harness "
            f"(--env.agent.harness.id {PLUGIN_ID})"
        )
    return summary  # type: ignore[no-any-return]


class AirlineTask(vf.Task[AirlineTaskData, AirlineState, AirlineTaskConfig]):
    """One airline episode: setup builds its env, scoring reads the graded episode."""

    @property
    def key(self) -> str:
        """Stable identity across runs: the task id and the seed."""
        return f"{self.data.id}/{self.data.seed}"

    async def setup(self, trace: Any) -> None:
        """Build this rollout's own env (the harness resets and plays it)."""
        config = self.config
        customer: dict[str, Any] = {"user": config.user}  # LLM settings only when given
        if config.user_model is not None:
            customer["user_model"] = config.user_model
        if config.user_llm_args:
            customer["user_llm_args"] = dict(config.user_llm_args)
        env = AirlineEnv(
            benchmark=self.data.benchmark,
            tasks=self.data.tasks,
            protocol=config.protocol,
            max_steps=config.max_steps,
            max_errors=config.max_errors,
            **customer,
        )
        trace.state._env = env

    async def finalize(self, trace: Any) -> None:
        """Grade an episode the rollout cut short (a timeout: the harness never returned)."""
        env: AirlineEnv | None = trace.state._env
        trace.state._env = None
        if env is None:
            return  # the harness played the episode to its end and recorded it
        if env.episode is not None:
            env.abort(f"the rollout stopped before the episode ended ({trace.stop_condition})")
            trace.info[_INFO] = episode_summary(env, self.data.seed)
        env.close()

    @vf.reward
    async def grade(self, trace: Any) -> float:
        """The env's grade: tau2's DB check x communicate check (0 for an unfinished episode)."""
        return float(_summary(trace)["reward"])

    @vf.metric
    async def episode_metrics(self, trace: Any) -> dict[str, float]:
        """Steps, tool calls, tool errors and one 0/1 metric per termination reason."""
        return summary_metrics(_summary(trace))


class AirlineTaskset(vf.Taskset[AirlineTask, AirlineTasksetConfig]):
    """The airline episodes of a split (or of ``task_ids``), ``repeats`` times."""

    def load(self) -> list[AirlineTask]:
        """One task per ``(task id, seed)``."""
        config = self.config
        benchmark = env_benchmark({"benchmark": config.benchmark, "tasks": config.tasks})
        ids, repeats, seed = config.task_ids, config.repeats, config.seed
        pairs = task_seeds(config.split, ids, repeats, seed, config.tasks, None, benchmark)
        return [
            AirlineTask(
                AirlineTaskData(
                    id=task_id,
                    name=f"airline task {task_id}",
                    prompt=f"(airline task {task_id}: the customer opens the conversation)",
                    seed=seed,
                    benchmark=benchmark,
                    tasks=config.tasks,
                ),
                config.task,
            )
            for task_id, seed in pairs
        ]


class AirlineHarness(vf.Harness[vf.HarnessConfig]):
    """Plays the rollout's episode in-process; every model call goes through verifiers."""

    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: Any,
        trace: Any,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: Any,
        tool_interception_url: str | None = None,
    ) -> Any:
        """Run the episode to its end; the summary goes to ``trace.info["airline"]``."""
        env = getattr(trace.state, "_env", None)
        if env is None:
            raise vf.HarnessError(f"the {PLUGIN_ID} harness plays AirlineTask rollouts only")
        # no client-side retries: verifiers records every call and owns the retry policy
        agent = LiteLLMAgent(
            f"openai/{ctx.model}", api_base=endpoint, api_key=secret, num_retries=0
        )
        try:
            result = await arun_episode(env, agent, data.id, data.seed)
            trace.info[_INFO] = episode_summary(env, data.seed)
        finally:  # an episode cut short (the rollout timed out) is left to the task's finalize
            if env.episode is None or env.episode.done:
                trace.state._env = None
                env.close()
        failed = _FAILURES.get(result.termination_reason)
        if failed is not None and trace.stop_condition is None:  # not a verifiers limit
            raise failed(
                f"the episode could not go on ({result.termination_reason}): {result.error}"
            )
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


class AirlineEnvConfig(vf.SingleAgentEnvConfig):
    """The single agent seat, on the local subprocess runtime by default."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class AirlineEpisodes(vf.Env[AirlineEnvConfig]):
    """One agent plays each airline episode (the customer lives inside the env)."""

    async def run(self, task: Any, agents: Any) -> None:
        """The episode: the agent's one run of the task."""
        await agents.agent.run(task)


def load_environment(env: Mapping[str, Any] | None = None, **taskset: Any) -> Any:
    """The ``vf.Env`` verifiers builds for :data:`PLUGIN_ID` (what ``vf.load_environment`` returns).

    Keyword arguments are the taskset's config (:class:`AirlineTasksetConfig`: ``benchmark``
    (``"tau2"`` by default, or ``"tau3"``), ``split``, ``task_ids``, ``repeats``, ``seed``,
    ``tasks``, ``task={"user": "llm", ...}``); ``env`` holds env-level config (e.g.
    ``{"agent": {"max_turns": 60}}``).
    """
    config = vf.resolve_env_config({**(env or {}), "taskset": {"id": PLUGIN_ID, **taskset}})
    return vf.load_environment(config)
