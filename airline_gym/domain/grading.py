"""Grade a finished episode exactly as tau2-bench does: DB check x communicate check.

``grade`` returns a :class:`Grade` with the reward, the DB verdict and a readable field-level diff
against the gold database, each communicate string with the message that met it, the
(diagnostic) action checks and the termination reason. An opt-in ``reward_basis`` multiplies
other components instead, as the reference combines them: any of ``DB`` (or
``ENV_ASSERTION``: the environment check), ``COMMUNICATE``, ``ACTION`` and ``NL_ASSERTION``
(the last needs a judge's :class:`~airline_gym.domain.nl_assertions.NLVerdict`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from airline_gym.domain.database import (
    AirlineDB,
    PristineDB,
    canonical_json,
    changed_records,
    clone,
    same_json,
)
from airline_gym.domain.initial_db import prepared_base, start_view
from airline_gym.domain.nl_assertions import (
    Judge,
    JudgeSteps,
    NLAssertionCheck,
    NLVerdict,
    nl_assertion_steps,
)
from airline_gym.domain.strict_grading import StrictCheck, strict_checks, task_checks_named
from airline_gym.domain.task_checks import KNOWN_REWARD_BASIS, run_basis
from airline_gym.domain.tasks import Task
from airline_gym.domain.toolbox import execute
from airline_gym.domain.transcript import assistant_texts, tool_calls
from airline_gym.errors import ConfigError, describe_exception

USER_STOP = "user_stop"
AGENT_STOP = "agent_stop"
MAX_STEPS = "max_steps"
TOO_MANY_ERRORS = "too_many_errors"
USER_ERROR = "user_error"
AGENT_ERROR = "agent_error"
#: ``tool-reply`` protocol: the agent replied without a tool call (where TRL's rollout ends).
NO_TOOL_CALL = "no_tool_call"
#: tau3's: the simulation failed on every attempt (spec §13.12c); it has no reward at all.
INFRASTRUCTURE_ERROR = "infrastructure_error"
GRADED_TERMINATIONS = frozenset({USER_STOP, AGENT_STOP})
KNOWN_BASIS = frozenset(KNOWN_REWARD_BASIS)
#: The components in the order the reference multiplies them (its breakdown's key order).
_COMPONENT_ORDER = ("DB", "ACTION", "NL_ASSERTION", "COMMUNICATE")


@dataclass(frozen=True)
class FieldDiff:
    """One field where the episode's DB differs from the gold DB."""

    table: str
    key: str
    path: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        where = f"{self.table}[{self.key}]{self.path}"
        return f"{where}: expected {json.dumps(self.expected)}, got {json.dumps(self.got)}"


@dataclass(frozen=True)
class CommunicateCheck:
    """One string the agent had to say; ``message_index`` is where it was said."""

    info: str
    met: bool
    message_index: int | None = None


@dataclass(frozen=True)
class ActionCheck:
    """A gold action and whether some tool call matched it (diagnostic in airline)."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    met: bool
    requestor: str = "assistant"
    info: str | None = None
    compare_args: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Grade:
    """The outcome of grading one episode."""

    reward: float
    termination_reason: str
    db_match: bool
    db_reward: float
    communicate_reward: float
    action_reward: float
    reward_basis: tuple[str, ...]
    communicate_checks: tuple[CommunicateCheck, ...] = ()
    action_checks: tuple[ActionCheck, ...] = ()
    db_diff: tuple[FieldDiff, ...] = ()
    note: str = ""
    breakdown: dict[str, float] = field(default_factory=dict)
    nl_assertions: tuple[NLAssertionCheck, ...] | None = None  # None: not judged
    judge_error: str | None = None
    #: A strict generated task's own checks (:mod:`~airline_gym.domain.strict_grading`),
    #: multiplied into ``reward``; empty for every other task or basis.
    strict_checks: tuple[StrictCheck, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (lists, dicts, strings, numbers)."""
        out = json.loads(json.dumps(asdict(self)))
        out["db_diff_text"] = [str(d) for d in self.db_diff]
        return out  # type: ignore[no-any-return]


def grading_failed(ended: str, exc: BaseException, reward_basis: Iterable[str] = ()) -> Grade:
    """The grade of an episode that ended as ``ended`` but whose grading raised ``exc``.

    No silent zero: the episode counts as ``agent_error`` (reward 0, as the harness has always
    recorded it) and ``note`` names the ending and the exception's type and text.
    """
    cause = f"grading the episode (ended: {ended}) failed: {describe_exception(exc)}"
    return Grade(
        reward=0.0,
        termination_reason=AGENT_ERROR,
        db_match=False,
        db_reward=0.0,
        communicate_reward=0.0,
        action_reward=0.0,
        reward_basis=tuple(reward_basis),
        note=cause,
    )


# --- gold database ---------------------------------------------------------------------------
_GOLD_CACHE: dict[tuple[int, str], AirlineDB] = {}


_GOLD_FIELDS: dict[int, tuple[AirlineDB, int]] = {}  # id(gold DB) -> (gold DB, fields changed)


def db_credit(task: Task, db: AirlineDB) -> float:
    """Partial credit for the DB, in [0, 1]: one minus the share of fields still wrong.

    The share is relative to the fields the task's gold actions change (at least 1): a DB that
    matches the gold DB scores 1, an untouched one 0 unless the gold actions change nothing,
    and wrong extra changes count against it. Used by reward shaping, never by the official
    reward.
    """
    gold = gold_db(task, db.base)
    known = _GOLD_FIELDS.get(id(gold))
    if known is None or known[0] is not gold:
        start = start_view(task, db.base)
        known = _GOLD_FIELDS[id(gold)] = (gold, max(1, len(db_diff(start, gold))))
    return max(0.0, 1.0 - len(db_diff(db, gold)) / known[1])


def partial_credit(grade: Grade, task: Task, db: AirlineDB) -> float:
    """The opt-in partial reward of a finished episode, in [0, 1].

    1 when the official reward is 1; 0 for a premature ending (not ``user_stop`` or
    ``agent_stop``); else half the :func:`db_credit` plus half the share of communicate
    strings said (all of them when the task has none).
    """
    if grade.reward == 1.0:
        return grade.reward
    if grade.termination_reason not in GRADED_TERMINATIONS:
        return 0.0
    checks = grade.communicate_checks
    said = sum(c.met for c in checks) / len(checks) if checks else 1.0
    return 0.5 * db_credit(task, db) + 0.5 * said


def gold_db(task: Task, base: PristineDB) -> AirlineDB:
    """The DB after the task's gold actions, from where the task starts (its
    ``initial_state``: :func:`~airline_gym.domain.initial_db.start_view`), computed once per
    task and pristine DB."""
    actions = [(a.name, a.arguments) for a in task.actions]
    key = (id(base), canonical_json([task.id, actions, task.initial_state]))
    cached = _GOLD_CACHE.get(key)
    if cached is None or cached.base is not prepared_base(task, base):
        cached = start_view(task, base)
        for action in task.actions:
            execute(cached, action.name, action.arguments)
        _GOLD_CACHE[key] = cached
    return cached


# --- field-level diff ------------------------------------------------------------------------
def _diff(expected: Any, got: Any, path: str, out: list[tuple[str, Any, Any]]) -> None:
    if expected is got:  # views share untouched sub-records with the pristine DB
        return
    if isinstance(expected, dict) and isinstance(got, dict):
        for k in list(expected) + [k for k in got if k not in expected]:
            _diff(expected.get(k, _MISSING), got.get(k, _MISSING), f"{path}.{k}", out)
    elif isinstance(expected, list) and isinstance(got, list):
        for i in range(max(len(expected), len(got))):
            e = expected[i] if i < len(expected) else _MISSING
            g = got[i] if i < len(got) else _MISSING
            _diff(e, g, f"{path}[{i}]", out)
    elif not _same_leaf(expected, got):
        out.append((path, clone(_plain(expected)), clone(_plain(got))))


def _same_leaf(a: Any, b: Any) -> bool:
    """Equal as the hash sees them: 3 and 3.0 (or 1 and True) differ."""
    return same_json(_plain(a), _plain(b))


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _plain(value: Any) -> Any:
    return "<missing>" if value is _MISSING else value


def db_diff(db: AirlineDB, gold: AirlineDB) -> list[FieldDiff]:
    """Every differing field between an episode DB and the gold DB."""
    diffs: list[FieldDiff] = []
    for table, key, got, expected in changed_records(db, gold):
        if got is None or expected is None:
            diffs.append(  # copies: a caller editing the diff must not edit the gold DB
                FieldDiff(
                    table,
                    key,
                    "",
                    clone(_record_or_missing(expected)),
                    clone(_record_or_missing(got)),
                )
            )
            continue
        fields: list[tuple[str, Any, Any]] = []
        _diff(expected, got, "", fields)
        diffs.extend(FieldDiff(table, key, p, e, g) for p, e, g in fields)
    return diffs


def _record_or_missing(record: Any) -> Any:
    return "<missing>" if record is None else record


# --- the checks ------------------------------------------------------------------------------
def communicate_checks(task: Task, messages: list[Any]) -> tuple[CommunicateCheck, ...]:
    """The reference's check: case-insensitive substring, commas removed from the agent text."""
    texts = [(i, text.lower().replace(",", "")) for i, text in assistant_texts(messages)]
    checks = []
    for info in task.communicate_info:
        where = next((i for i, text in texts if info.lower() in text), None)
        checks.append(CommunicateCheck(info=info, met=where is not None, message_index=where))
    return tuple(checks)


def action_checks(task: Task, messages: list[Any]) -> tuple[ActionCheck, ...]:
    """Which gold actions some tool call matches (diagnostic only in airline)."""
    calls = [c for c in tool_calls(messages) if isinstance(c.arguments, dict)]
    return tuple(
        ActionCheck(
            action_id=a.action_id,
            name=a.name,
            arguments=a.arguments,
            met=any(a.matches(c.name, c.arguments) for c in calls),
            requestor=a.requestor,
            info=a.info,
            compare_args=a.compare_args,
        )
        for a in task.actions
    )


def grade(
    task: Task,
    db: AirlineDB,
    messages: Iterable[Any],
    termination_reason: str,
    reward_basis: Iterable[str] | None = None,
    nl: NLVerdict | None = None,
) -> Grade:
    """Grade an episode: ``db`` is its final database, ``messages`` its full conversation.

    ``reward_basis`` (default: the task's own) names the components multiplied into the
    reward; ``NL_ASSERTION`` needs ``nl``, the judge's verdict on this episode. A judge that
    failed scores 0 with its cause in ``judge_error`` and ``note``. On the task's own basis a
    strict generated task's checks (``airline_gym.checks``) multiply the reward too, each in
    ``strict_checks``; a failed one is named in ``note``.
    """
    messages = list(messages)
    basis = task.reward_basis if reward_basis is None else run_basis(reward_basis)
    if "NL_ASSERTION" in basis and nl is None and termination_reason in GRADED_TERMINATIONS:
        raise ConfigError("NL_ASSERTION in reward_basis needs the NL judge's verdict (nl=...)")

    gold = gold_db(task, db.base)
    diffs = tuple(db_diff(db, gold)) if task.has_criteria else ()
    db_match = not diffs
    comm = communicate_checks(task, messages)
    acts = action_checks(task, messages)
    components = {
        "DB": float(db_match),
        "ACTION": float(all(a.met for a in acts)),
        "NL_ASSERTION": 1.0 if nl is None else nl.reward,
        "COMMUNICATE": float(all(c.met for c in comm)),
    }
    wanted = set(basis) | ({"DB"} if "ENV_ASSERTION" in basis else set())
    breakdown = {k: components[k] for k in _COMPONENT_ORDER if k in wanted}
    reward = 1.0
    for value in breakdown.values():
        reward *= value
    strict: tuple[StrictCheck, ...] = ()
    if reward_basis is None and termination_reason in GRADED_TERMINATIONS:
        strict = strict_checks(
            task_checks_named(task.raw),
            db.base,
            messages,
            [a.name for a in task.actions],
            task.communicate_info,
            termination_reason,
        )
    if not all(c.met for c in strict):
        reward = 0.0
    note = ""
    judge_error = nl.error if nl is not None and "NL_ASSERTION" in basis else None
    if judge_error:
        note = judge_error
    failed = [f"{c.name}: {c.why}" for c in strict if not c.met]
    if failed:
        note = "; ".join([note, *failed]) if note else "; ".join(failed)
    if termination_reason not in GRADED_TERMINATIONS:
        reward = 0.0
        note = f"Simulation terminated prematurely. Termination reason: {termination_reason}"
        judge_error = None
    return Grade(
        reward=reward,
        termination_reason=termination_reason,
        db_match=db_match,
        db_reward=components["DB"],
        communicate_reward=components["COMMUNICATE"],
        action_reward=components["ACTION"],
        reward_basis=basis,
        communicate_checks=comm,
        action_checks=acts,
        db_diff=diffs,
        note=note,
        breakdown=breakdown,
        nl_assertions=None if nl is None or nl.error else nl.checks,
        judge_error=judge_error,
        strict_checks=strict,
    )


def grading(
    task: Task,
    db: AirlineDB,
    messages: Iterable[Any],
    termination_reason: str,
    reward_basis: Iterable[str] | None = None,
    judge: Judge | None = None,
) -> JudgeSteps[Grade]:
    """:func:`grade` as steps, asking the judge for the NL verdict when the basis has
    ``NL_ASSERTION``: run them with :func:`~airline_gym.domain.nl_assertions.judged` (blocking)
    or :func:`~airline_gym.domain.nl_assertions.drive` (awaiting the judge).

    The judge is asked only for an episode the reference would evaluate (``user_stop`` or
    ``agent_stop``), once; ``judge`` is given only to refuse a basis that needs one without it.
    """
    messages = list(messages)
    basis = task.reward_basis if reward_basis is None else run_basis(reward_basis)
    ask = "NL_ASSERTION" in basis and termination_reason in GRADED_TERMINATIONS
    if ask and judge is None:
        raise ConfigError("NL_ASSERTION in reward_basis needs an NL judge (judge=...)")
    nl = (yield from nl_assertion_steps(task.nl_assertions, messages)) if ask else None
    return grade(task, db, messages, termination_reason, reward_basis, nl)
