"""A simulation's grade as the report shows it: DB diff field by field, communicate matches.

Results files carry little of this (``tau2 run`` files and leaderboard submissions only say
whether the DB matched), so each simulation is re-graded with the project's regrade code
(:func:`airline_gym.harness.regrade.regrade_simulation`): its tool calls are replayed on a fresh
DB and graded against its task. When that is impossible (no such task, replay raised) the
report falls back to what the file recorded and says why it could not re-grade.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.domain.database import PristineDB
from airline_gym.domain.grading import GRADED_TERMINATIONS, Grade
from airline_gym.domain.tasks import Task
from airline_gym.harness.regrade import regrade_simulation
from airline_gym.harness.results.io import JSONObject
from airline_gym.harness.results.metrics import judge_error_of

__all__ = ["highlight_span", "simulation_grade", "utf16_offset"]


def utf16_offset(text: str, index: int) -> int:
    """``text[:index]``'s length in UTF-16 code units (how a browser's strings count)."""
    return len(text[:index].encode("utf-16-le")) // 2


def highlight_span(text: str, info: str) -> tuple[int, int] | None:
    """Where ``info`` was said in ``text`` as the communicate check finds it, in UTF-16 units.

    The check lowercases the agent's text and removes its commas; the span returned covers the
    original characters that produced the match (commas inside it included).
    """
    folded: list[str] = []
    origin: list[int] = []  # folded position -> index in text
    for index, char in enumerate(text):
        if char == ",":
            continue
        for low in char.lower():
            folded.append(low)
            origin.append(index)
    needle = info.lower()
    start = "".join(folded).find(needle) if needle else -1
    if start < 0:
        return None
    end = origin[start + len(needle) - 1] + 1
    return utf16_offset(text, origin[start]), utf16_offset(text, end)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _recorded(sim: Mapping[str, Any]) -> JSONObject:
    """What the file itself says about the grade (used when re-grading is impossible)."""
    info = _mapping(sim.get("reward_info"))
    db_check = _mapping(info.get("db_check"))
    communicate = []
    for check in info.get("communicate_checks") or []:
        if isinstance(check, Mapping):
            communicate.append(
                {
                    "info": str(check.get("info", "")),
                    "met": bool(check.get("met")),
                    "index": None,
                    "span": None,
                    "note": str(check.get("justification") or ""),
                }
            )
    actions = []
    for check in info.get("action_checks") or []:
        action = check.get("action") if isinstance(check, Mapping) else None
        if isinstance(action, Mapping):
            actions.append(
                {
                    "name": str(action.get("name", "")),
                    "arguments": _json(action.get("arguments")),
                    "met": bool(check.get("action_match")),
                }
            )
    diff_text = _mapping(_mapping(info.get("info")).get("env")).get("db_diff")
    return {
        "db_match": db_check.get("db_match"),
        "db_diff": [],
        "db_diff_text": [str(d) for d in diff_text or []],
        "communicate": communicate,
        "actions": actions,
        "basis": list(info.get("reward_basis") or []),
    }


def _from_grade(g: Grade, messages: Sequence[Any]) -> JSONObject:
    communicate = []
    for check in g.communicate_checks:
        span = None
        if check.message_index is not None:
            content = messages[check.message_index].get("content")
            span = highlight_span(content, check.info) if isinstance(content, str) else None
        communicate.append(
            {
                "info": check.info,
                "met": check.met,
                "index": check.message_index,
                "span": span,
                "note": "",
            }
        )
    return {
        "db_match": g.db_match,
        "db_diff": [
            {
                "table": d.table,
                "key": d.key,
                "path": d.path,
                "expected": _json(d.expected),
                "got": _json(d.got),
            }
            for d in g.db_diff
        ],
        "db_diff_text": [],
        "communicate": communicate,
        "actions": [
            {"name": a.name, "arguments": _json(a.arguments), "met": a.met} for a in g.action_checks
        ],
        "basis": list(g.reward_basis),
    }


def _cause(sim: Mapping[str, Any]) -> str:
    """Why the episode ended as it did, when the file says (an LLM failure, a grading note)."""
    info = sim.get("reward_info")
    details = info.get("info") if isinstance(info, Mapping) else None
    if not isinstance(details, Mapping):
        return ""
    parts = [str(details[k]) for k in ("error", "note") if details.get(k)]
    return "; ".join(parts)


_NL = "NL_ASSERTION"


def _recorded_nl(sim: Mapping[str, Any]) -> float | None:
    """The NL_ASSERTION component the file recorded (``reward_breakdown``), if a number."""
    breakdown = _mapping(_mapping(sim.get("reward_info")).get("reward_breakdown"))
    value = breakdown.get(_NL)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def simulation_grade(
    sim: Mapping[str, Any],
    task: Task | None,
    base: PristineDB | None,
    why_not: str = "",
    basis: tuple[str, ...] | None = None,
) -> JSONObject:
    """The report's grade of ``sim``: re-graded against ``task`` when given, else as recorded.

    ``why_not`` says why there is no task (shown instead of the re-graded figures). ``basis``
    is the run's recorded reward basis (``None``: each task's own). The report never calls an
    NL judge: with NL_ASSERTION in the basis, the other components are re-graded and the
    recorded NL verdict multiplies them; a recorded judge failure leaves it not re-graded.
    """
    out: JSONObject
    regraded: float | None = None
    error = why_not
    mismatches = 0
    judge_error = judge_error_of(sim)
    rest = None if basis is None else tuple(b for b in basis if b != _NL)
    if task is not None and base is not None:
        try:
            result = regrade_simulation(sim, task, base, rest or (basis and ("DB",)))
        except Exception as exc:  # a hostile record: say so, show what was recorded
            error = f"re-grading raised {type(exc).__name__}: {str(exc)[:300]}"
            out = _recorded(sim)
        else:
            assert result.grade is not None
            out = _from_grade(result.grade, list(sim.get("messages") or []))
            regraded = result.reward
            mismatches = len(result.output_mismatches)
            if basis is not None and _NL in basis:
                out["basis"] = list(basis)
                graded = result.grade.termination_reason in GRADED_TERMINATIONS
                regraded = regraded if rest else float(graded)
                nl = _recorded_nl(sim)
                if judge_error or nl is None:
                    regraded = None
                    error = (
                        "the NL judge failed: no verdict to re-grade with"
                        if judge_error
                        else "the file records no NL_ASSERTION verdict (the report does not "
                        "ask a judge)"
                    )
                else:
                    regraded *= nl
    else:
        out = _recorded(sim)
    out.update(
        {
            "regraded": regraded,
            "regrade_error": error,
            "replay_mismatches": mismatches,
            "cause": _cause(sim),
            "judge_error": judge_error or "",
        }
    )
    return out
