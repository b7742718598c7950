"""Checks on task records, run when a task set loads: one line naming the task and the field.

:func:`check_task` is what grading reads (also applied to the tasks embedded in a results file
by ``regrade``); :func:`check_playable_task` adds what playing an episode reads (the customer's
scenario). :func:`check_gradable` refuses tasks whose reward needs what the run lacks (a judge
model for ``NL_ASSERTION``); call it where a run's settings are known (the env, ``evaluate``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from airline_gym.domain.initial_state import check_initial_state
from airline_gym.domain.task_meta import FIELDS, STRICT_CHECK_NAMES, check_meta
from airline_gym.domain.validation import described, json_type
from airline_gym.errors import ConfigError

if TYPE_CHECKING:
    from airline_gym.domain.tasks import Task

__all__ = [
    "KNOWN_REWARD_BASIS",
    "NEEDS_JUDGE",
    "STRICT_CHECK_NAMES",
    "check_gradable",
    "check_playable_task",
    "check_reward_basis",
    "check_task",
    "run_basis",
]

#: The reward bases tau2 defines (``RewardType``), in its order.
KNOWN_REWARD_BASIS: tuple[str, ...] = (
    "DB",
    "ENV_ASSERTION",
    "NL_ASSERTION",
    "ACTION",
    "COMMUNICATE",
)
#: Bases that only an LLM judge can score.
NEEDS_JUDGE = frozenset({"NL_ASSERTION"})


def _strings(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def check_reward_basis(value: Any, where: str) -> None:
    """``evaluation_criteria.reward_basis``: null or a non-empty list of known basis names.

    An empty list is refused: the reference's evaluator multiplies no component and gives
    1.0 to every episode that ends with ``user_stop`` or ``agent_stop``, a reward that pays
    for nothing (as :func:`run_basis` refuses a run's empty basis)."""
    field = f"{where}: 'evaluation_criteria.reward_basis'"
    if value is None:
        return
    if not isinstance(value, list):
        raise ConfigError(
            f"{field} must be a list of basis names ({', '.join(KNOWN_REWARD_BASIS)}), "
            f"not {described(value)}"
        )
    unknown = [v for v in value if v not in KNOWN_REWARD_BASIS]
    if unknown:
        shown = ", ".join(repr(v)[:40] for v in unknown[:3])
        raise ConfigError(
            f"{field} has unknown basis {shown} (known: {', '.join(KNOWN_REWARD_BASIS)})"
        )
    if not value:  # the reference multiplies no component: 1.0 for any agent that ends
        raise ConfigError(
            f"{field} is empty: tau2 scores every episode that ends 1.0 whatever the agent "
            'did; name the components (e.g. ["DB", "COMMUNICATE"]), or leave the key '
            "out for that default"
        )


def check_task(raw: Any, where: str) -> None:
    """Raise a one-line ``ConfigError`` unless ``raw`` is a task record grading can read.

    Checked: ``id`` (string or integer) and ``evaluation_criteria`` (``actions``: objects with a
    string ``name`` and an object ``arguments``; ``communicate_info``, ``nl_assertions``: lists
    of strings; ``reward_basis``: a non-empty list of known basis names; each may be null), and a
    generated task's ``airline_gym.checks`` (known strict check names).
    """
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be an object, not {json_type(raw)}")
    if "id" not in raw:
        raise ConfigError(f"{where}: missing field 'id'")
    if isinstance(raw["id"], bool) or not isinstance(raw["id"], str | int):
        kind = json_type(raw["id"])
        raise ConfigError(f"{where}: 'id' must be a string or an integer, not {kind}")
    where = f"{where} (id {raw['id']!r})"
    check_initial_state(raw, where)
    criteria = raw.get("evaluation_criteria")
    if criteria is None:
        return
    if not isinstance(criteria, dict):
        raise ConfigError(f"{where}: 'evaluation_criteria' must be an object")
    for name in ("communicate_info", "nl_assertions"):
        if not _strings(criteria.get(name)):
            raise ConfigError(f"{where}: 'evaluation_criteria.{name}' must be a list of strings")
    check_reward_basis(criteria.get("reward_basis"), where)
    _check_strict(raw.get("airline_gym"), where)
    actions = criteria.get("actions")
    if actions is not None and not isinstance(actions, list):
        raise ConfigError(f"{where}: 'evaluation_criteria.actions' must be a list")
    for i, action in enumerate(actions or []):
        field_ = f"{where}: 'evaluation_criteria.actions[{i}]"
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            raise ConfigError(f"{field_}' must be an object with a string 'name'")
        if not isinstance(action.get("arguments") or {}, dict):
            raise ConfigError(f"{field_}.arguments' must be an object")
        if not _strings(action.get("compare_args")):
            raise ConfigError(f"{field_}.compare_args' must be a list of strings")


def _check_strict(extra: Any, where: str) -> None:
    """``airline_gym.checks``, when present (what grading reads of the key; the rest of it is
    checked with the scenario, :func:`check_playable_task`)."""
    checks = extra.get("checks") if isinstance(extra, dict) else None
    problem = None if checks is None else FIELDS["checks"](checks)
    if problem is not None:
        raise ConfigError(f"{where}: 'airline_gym.checks' {problem}")


_SCENARIO_TEXTS = ("domain", "reason_for_call", "task_instructions")


def check_playable_task(raw: Any, where: str) -> None:
    """:func:`check_task`, plus the ``user_scenario`` the customer plays (tau2's shape) and the
    ``airline_gym`` key (:func:`~airline_gym.domain.task_meta.check_meta`)."""
    check_task(raw, where)
    where = f"{where} (id {raw['id']!r})"
    check_meta(raw, where)
    scenario = raw.get("user_scenario")
    if not isinstance(scenario, dict):
        what = "missing field" if scenario is None else f"{json_type(scenario)} in field"
        raise ConfigError(f"{where}: {what} 'user_scenario' (an object with 'instructions')")
    if not isinstance(scenario.get("persona"), str | None):
        raise ConfigError(f"{where}: 'user_scenario.persona' must be a string or null")
    instructions = scenario.get("instructions")
    if isinstance(instructions, str):
        return
    if not isinstance(instructions, dict):
        raise ConfigError(
            f"{where}: 'user_scenario.instructions' must be an object or a string, "
            f"not {json_type(instructions)}"
        )
    for name in _SCENARIO_TEXTS:
        if not isinstance(instructions.get(name), str):
            raise ConfigError(f"{where}: 'user_scenario.instructions.{name}' must be a string")
    for name in ("known_info", "unknown_info"):
        if not isinstance(instructions.get(name), str | None):
            raise ConfigError(f"{where}: 'user_scenario.instructions.{name}' must be a string")


def run_basis(basis: Iterable[str] | str, where: str = "reward_basis") -> tuple[str, ...]:
    """A run's own ``reward_basis`` (a list, or one comma-separated string; case and spaces
    ignored), checked: known names, at least one. One-line ``ConfigError`` otherwise."""
    if isinstance(basis, str):
        basis = [part.strip().upper() for part in basis.split(",") if part.strip()]
    names = tuple(basis)
    if not all(isinstance(b, str) for b in names):
        raise ConfigError(f"{where} must name components, not {names!r:.60}")
    unknown = [b for b in names if b not in KNOWN_REWARD_BASIS]
    if unknown:
        shown = ", ".join(repr(v)[:40] for v in unknown[:3])
        raise ConfigError(
            f"{where} has unknown basis {shown} (known: {', '.join(KNOWN_REWARD_BASIS)})"
        )
    if not names:
        raise ConfigError(f"{where} names no component (known: {', '.join(KNOWN_REWARD_BASIS)})")
    return names


def check_gradable(
    tasks: Iterable[Task],
    source: str,
    judge: object | None = None,
    reward_basis: Iterable[str] | None = None,
) -> None:
    """Refuse a ``reward_basis`` this run cannot score: the run's own when given (see
    :func:`run_basis`), else each task's.

    ``NL_ASSERTION`` needs a judge model: without ``judge``, the run's basis, or the first task
    whose basis has it, is named in a one-line ``ConfigError``. (Unknown basis names never get
    here: :func:`check_task` refuses them when the task set loads, :func:`run_basis` in a
    run's settings.)
    """
    if judge is not None:
        return
    if reward_basis is not None:
        needs = [b for b in reward_basis if b in NEEDS_JUDGE]
        if needs:
            raise ConfigError(
                f"reward_basis includes {needs[0]}, which needs a judge model, and none is "
                "configured"
            )
        return
    for task in tasks:
        needs = [b for b in task.reward_basis if b in NEEDS_JUDGE]
        if needs:
            raise ConfigError(
                f"{source}: task {task.id!r}: 'evaluation_criteria.reward_basis' includes "
                f"{needs[0]}, which needs a judge model, and none is configured"
            )
