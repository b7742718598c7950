"""The NL judge a run grades with: a chat model wired to the domain's judge.

The judge's prompt and how its verdict is read are the domain's
(:mod:`airline_gym.domain.nl_assertions`, pure); here a model is put behind it: our LLM client
with the reference's settings, its credentials checked up front (:func:`make_judge`), the judge
a run's reward basis needs (:func:`judge_for`, :func:`grading_setup`) and the customer's reply
cache in front of it (:func:`judge_with_cache`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airline_gym.domain.nl_assertions import DEFAULT_JUDGE_MODEL, JudgeReplyError, parse_verdicts
from airline_gym.domain.task_checks import check_gradable, run_basis
from airline_gym.errors import ConfigError
from airline_gym.llm import LiteLLMChatModel, check_credentials
from airline_gym.llm.reply_cache import CachedChatModel

if TYPE_CHECKING:
    from airline_gym.domain.tasks import Task, TaskSet

__all__ = ["grading_setup", "judge_for", "judge_with_cache", "make_judge"]


def make_judge(model: str = DEFAULT_JUDGE_MODEL, llm_args: Mapping[str, Any] | None = None) -> Any:
    """The reference's judge settings (temperature 0) on any litellm model, through our client.

    ``llm_args`` as for the customer (``api_base``, ``api_key``, ``timeout``, ...); a local
    server at ``api_base`` needs no key. Raises ConfigError at once when a hosted model has no
    credentials.
    """
    settings = {"temperature": 0.0, **dict(llm_args or {})}
    chat_model = LiteLLMChatModel.from_args(model, settings)
    problem = check_credentials(model, chat_model.api_base, chat_model.api_key)
    if problem:
        raise ConfigError(f"the NL judge cannot run: {problem}")
    return chat_model


def judge_for(
    basis: Sequence[str] | None,
    tasks: Iterable[Task],
    judge: Any = None,
    llm_args: Mapping[str, Any] | None = None,
) -> Any:
    """The NL judge a run needs (a chat model), or None when no basis in use needs one.

    A run's own ``basis`` with NL_ASSERTION gets :func:`make_judge` (the reference's model
    unless ``judge`` names another); tasks whose own basis has it get a judge only when
    ``judge`` is given (a model name, or a ready chat model, used as is).
    """
    if basis is not None:
        needed = "NL_ASSERTION" in basis
    else:
        needed = judge is not None and any("NL_ASSERTION" in t.reward_basis for t in tasks)
    if not needed:
        return None
    if judge is None or isinstance(judge, str):
        return make_judge(judge or DEFAULT_JUDGE_MODEL, llm_args)
    return judge


def grading_setup(
    tasks: TaskSet,
    reward_basis: Iterable[str] | str | None,
    judge: Any = None,
    llm_args: Mapping[str, Any] | None = None,
) -> tuple[tuple[str, ...] | None, Any]:
    """A run's checked ``reward_basis`` (None: each task's own) and the judge it needs.

    The basis is checked by :func:`~airline_gym.domain.task_checks.run_basis`; a basis in use
    with NL_ASSERTION and no judge is refused by
    :func:`~airline_gym.domain.task_checks.check_gradable` (one line).
    """
    basis = None if reward_basis is None else run_basis(reward_basis)
    chosen = judge_for(basis, tasks, judge, llm_args)
    check_gradable(tasks, f"tasks file {tasks.name}", chosen, basis)
    return basis, chosen


def judge_with_cache(judge: Any, cache: Any) -> Any:
    """``judge`` answering from a customer reply ``cache`` too (a LiteLLMChatModel judge)."""
    if isinstance(judge, LiteLLMChatModel) and cache is not None:
        return CachedChatModel(judge, cache, accept=_parses)
    return judge


def _parses(reply: Any) -> bool:
    """Whether a judge reply holds verdicts: one that does not is never cached, so a retry
    asks the judge again."""
    try:
        parse_verdicts(getattr(reply, "content", None))
    except JudgeReplyError:
        return False
    return True
