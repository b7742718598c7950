"""Strict grading of generated tasks: what the agent did, beyond the reference's DB and words.

A generated task graded ``strict`` lists in ``task["airline_gym"]["checks"]`` the checks below;
:func:`~airline_gym.domain.grading.grade` multiplies them into the reward (on the task's own
basis) and names each in ``reward_info.strict_checks``, so a trainer sees why a reward is 0.
Pure: the transcript, the gold and a replay of the agent's writes on the pristine DB decide,
never the customer that played the episode, so every reader of a results file tells the same
grade.

``WRITES``
    Only the writes and transfers the gold makes: per tool, the agent's successful writes are
    at most the gold's. A write undone later, and a repeated write, are writes.
``CONFIRMED``
    Every write call (a transfer aside; one the tool refuses too) follows a customer turn saying
    yes (:func:`~airline_gym.domain.said.is_yes`) to the agent's last message the customer saw,
    that message names the write (:func:`~airline_gym.domain.proposals.unnamed`), and the yes
    has not been spent: a yes covers each write it names once, until that write goes through,
    so a write made again on the same yes is unconfirmed.
``SETTLED``
    The customer ends the call (``user_stop``; the agent hanging up is ``agent_stop``), not
    unhappy (:func:`~airline_gym.domain.said.left_unsatisfied`), and handed off only where the
    gold transfers.
``ANSWERED``
    Each ``communicate_info`` figure reached the customer: a message it saw (no tool call with
    it) states that figure and no other (a list of candidates tells the customer nothing).

What the customer saw of a message is its first :data:`~airline_gym.domain.said.READ_LIMIT`
characters, as the offline customer reads it.

To add a check: a function here taking a :class:`Transcript`, an entry in :data:`CHECKS`, its
name in ``task_meta.STRICT_CHECK_NAMES`` (what the ``airline_gym.checks`` field may list), and
the generator's ``assemble`` lists it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.database import AirlineDB, PristineDB, canonical_json
from airline_gym.domain.prompts import OUT_OF_SCOPE, TRANSFER
from airline_gym.domain.proposals import unnamed
from airline_gym.domain.said import (
    figure_equals,
    figures,
    is_yes,
    left_unsatisfied,
    readable,
)
from airline_gym.domain.task_meta import STRICT_CHECK_NAMES
from airline_gym.domain.toolbox import execute
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.domain.transcript import tool_calls

__all__ = ["CHECKS", "StrictCheck", "Transcript", "strict_checks", "task_checks_named"]

_TRANSFER_TOOL = "transfer_to_human_agents"
_USER_STOP, _AGENT_STOP = "user_stop", "agent_stop"


@dataclass(frozen=True)
class StrictCheck:
    """One strict check: its name, whether it is met, and why not."""

    name: str
    met: bool
    why: str = ""


@dataclass
class Transcript:
    """What the checks read, gathered in one pass over the messages."""

    gold_writes: Counter[str]
    communicate_info: tuple[str, ...]
    termination: str
    #: The texts the customer saw from the agent (assistant messages without tool calls).
    seen: list[str] = field(default_factory=list)
    #: The customer's turns.
    customer: list[str] = field(default_factory=list)
    #: Successful writes and transfers per tool.
    writes: Counter[str] = field(default_factory=Counter)
    #: Why a write was not confirmed, one line per write.
    unconfirmed: list[str] = field(default_factory=list)


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):
        content = "".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""


@dataclass
class _Yes:
    """The customer's last yes: the message it answered, and the writes it has paid for."""

    proposal: str
    spent: set[str] = field(default_factory=set)


def _write(db: AirlineDB, name: str, args: Any, yes: _Yes | None, out: Transcript) -> None:
    """Replay one agent write: judge its confirmation, and count it if it went through."""
    if not isinstance(args, dict):
        return
    key = canonical_json([name, args])
    if yes is None:
        out.unconfirmed.append(f"{name} without a customer yes just before it")
    elif key in yes.spent:
        out.unconfirmed.append(f"{name} made again on a yes it was already made on")
    else:
        missing = unnamed(yes.proposal, name, args, db)
        if missing:
            out.unconfirmed.append(
                f"{name}: the proposal the customer said yes to names no {', '.join(missing)}"
            )
    try:
        failed = execute(db, name, dict(args)).error
    except Exception:  # a hostile argument our tool did not expect: no write happened
        failed = True
    if not failed:
        out.writes[name] += 1
        if yes is not None:
            yes.spent.add(key)


def read_transcript(
    base: PristineDB,
    messages: Iterable[Any],
    gold: Iterable[str],
    communicate_info: Iterable[str],
    termination: str,
) -> Transcript:
    """Walk the messages once, replaying the agent's writes on a fork of ``base``."""
    messages = list(messages)
    gold_writes = Counter(n for n in gold if n in WRITE_TOOLS or n == _TRANSFER_TOOL)
    out = Transcript(gold_writes, tuple(communicate_info), termination)
    calls: dict[int, list[Any]] = {}
    for call in tool_calls(messages):
        if call.requestor == "assistant":
            calls.setdefault(call.message_index, []).append(call)
    db = base.fork()
    last_seen: str | None = None
    yes: _Yes | None = None  # the customer's last turn, when it said yes
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "user":
            text = _text(message)
            out.customer.append(text)
            yes = _Yes(last_seen) if last_seen is not None and is_yes(text) else None
        elif role == "assistant" and index not in calls:
            text = readable(_text(message))  # what the customer read of it
            if text.strip():
                out.seen.append(text)
                last_seen = text
        for call in calls.get(index, ()):
            if call.name == _TRANSFER_TOOL:
                out.writes[call.name] += 1
            elif call.name in WRITE_TOOLS:
                _write(db, call.name, call.arguments, yes, out)
    return out


def _writes(t: Transcript) -> StrictCheck:
    extra = [
        f"{name} {n} time(s), the gold {t.gold_writes[name]}"
        for name, n in sorted(t.writes.items())
        if n > t.gold_writes[name]
    ]
    return StrictCheck("WRITES", not extra, "; ".join(extra))


def _confirmed(t: Transcript) -> StrictCheck:
    return StrictCheck("CONFIRMED", not t.unconfirmed, "; ".join(t.unconfirmed[:3]))


def _settled(t: Transcript) -> StrictCheck:
    if t.termination != _USER_STOP:
        why = "the agent ended the call" if t.termination == _AGENT_STOP else t.termination
        return StrictCheck("SETTLED", False, why)
    last = t.customer[-1] if t.customer else ""
    if left_unsatisfied(last):
        return StrictCheck("SETTLED", False, f"the customer left unsatisfied: {last[:200]!r}")
    if TRANSFER in last and not t.gold_writes[_TRANSFER_TOOL]:
        return StrictCheck("SETTLED", False, "handed off where the policy hands nothing off")
    if OUT_OF_SCOPE in last:
        return StrictCheck("SETTLED", False, "the customer ended the call out of scope")
    return StrictCheck("SETTLED", True)


def _answered(t: Transcript) -> StrictCheck:
    alone = [found[0] for found in (figures(text) for text in t.seen) if len(found) == 1]
    missing = [v for v in t.communicate_info if not any(figure_equals(a, v) for a in alone)]
    why = f"never told the customer {', '.join(missing)} alone in a message" if missing else ""
    return StrictCheck("ANSWERED", not missing, why)


#: Each check by name (see the module docstring).
CHECKS: dict[str, Callable[[Transcript], StrictCheck]] = {
    "WRITES": _writes,
    "CONFIRMED": _confirmed,
    "SETTLED": _settled,
    "ANSWERED": _answered,
}
assert tuple(CHECKS) == STRICT_CHECK_NAMES


def task_checks_named(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The strict checks a task record lists (``airline_gym.checks``; none for other tasks)."""
    extra = raw.get("airline_gym")
    names = extra.get("checks") if isinstance(extra, Mapping) else None
    return tuple(n for n in names if n in CHECKS) if isinstance(names, list) else ()


def strict_checks(
    names: Iterable[str],
    base: PristineDB,
    messages: Iterable[Any],
    gold: Iterable[str],
    communicate_info: Iterable[str],
    termination: str,
) -> tuple[StrictCheck, ...]:
    """The named checks of one episode (in :data:`CHECKS` order)."""
    wanted = set(names)
    if not wanted:
        return ()
    t = read_transcript(base, messages, gold, communicate_info, termination)
    return tuple(check(t) for name, check in CHECKS.items() if name in wanted)
