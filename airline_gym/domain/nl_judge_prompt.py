"""The NL-assertion judge's prompt, read from the reference's evaluator source with ``ast``.

The reference (``tau2/evaluator/evaluator_nl_assertions.py`` of the fetched package, see
:mod:`airline_gym.data`) builds its judge request inside
``NLAssertionsEvaluator.evaluate_nl_assertions``: a ``system_prompt`` string literal and a
``user_prompt`` f-string over ``trajectory_str`` (the conversation as ``"{role}: {content}"``
lines) and ``nl_assertions`` (the assertion list, formatted as Python formats a list). Both
are read here from the source, never imported and never copied, and the code that renders the
conversation is checked to be the one this module reproduces (else :class:`DataError`).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from airline_gym.data import DataError, data_files
from airline_gym.data.limits import TEXT_MAX_BYTES, read_limited_text

__all__ = ["JudgePrompt", "judge_prompt", "render_trajectory"]

_CLASS, _METHOD = "NLAssertionsEvaluator", "evaluate_nl_assertions"
_PLACEHOLDERS = frozenset({"trajectory_str", "nl_assertions"})
# The one line of the reference's code that renders the conversation, as ast.unparse spells it.
_TRAJECTORY_CODE = (
    "trajectory_str = '\\n'.join([f'{message.role}: {message.content}' for message in trajectory])"
)


def render_trajectory(messages: Sequence[Mapping[str, Any]]) -> str:
    """The conversation as the reference renders it: ``"{role}: {content}"`` lines.

    ``messages`` are tau2-format messages (what a results file stores); a message without
    text (a tool call alone) prints ``None``, as in the reference.
    """
    return "\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages)


@dataclass(frozen=True)
class JudgePrompt:
    """The judge's system prompt and the pieces of its user prompt (text or placeholder)."""

    system: str
    user_pieces: tuple[tuple[str, str], ...]  # ("text", literal) or ("name", placeholder)

    def user(self, trajectory: str, assertions: Sequence[str]) -> str:
        """The user prompt for a rendered conversation and the task's assertions."""
        values = {"trajectory_str": trajectory, "nl_assertions": list(assertions)}
        return "".join(
            value if kind == "text" else format(values[value]) for kind, value in self.user_pieces
        )

    def messages(self, trajectory: str, assertions: Sequence[str]) -> list[dict[str, Any]]:
        """The chat messages of one judge request (system, then user)."""
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user(trajectory, assertions)},
        ]


def _method(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == _CLASS:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == _METHOD:
                    return item
    return None


def _assignments(method: ast.FunctionDef) -> dict[str, ast.Assign]:
    out: dict[str, ast.Assign] = {}
    for statement in method.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                out[target.id] = statement
    return out


def _user_pieces(node: ast.expr, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(node, ast.JoinedStr):
        raise DataError(f"{where}: user_prompt is not an f-string")
    pieces: list[tuple[str, str]] = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            pieces.append(("text", part.value))
        elif (
            isinstance(part, ast.FormattedValue)
            and isinstance(part.value, ast.Name)
            and part.value.id in _PLACEHOLDERS
            and part.conversion == -1
            and part.format_spec is None
        ):
            pieces.append(("name", part.value.id))
        else:
            raise DataError(f"{where}: unexpected piece {ast.unparse(part)!r} in user_prompt")
    return tuple(pieces)


@cache
def _read(path: str) -> JudgePrompt:
    try:
        tree = ast.parse(read_limited_text(path, TEXT_MAX_BYTES, "source file"), filename=path)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise DataError(f"Cannot read the reference's NL evaluator {path}: {exc}") from exc
    where = f"{path} ({_CLASS}.{_METHOD})"
    method = _method(tree)
    if method is None:
        raise DataError(f"No {_CLASS}.{_METHOD} in {path}")
    found = _assignments(method)
    missing = [n for n in ("trajectory_str", "system_prompt", "user_prompt") if n not in found]
    if missing:
        raise DataError(f"{where}: no assignment to {', '.join(missing)}")
    if ast.unparse(found["trajectory_str"]) != _TRAJECTORY_CODE:
        raise DataError(f"{where}: the conversation is rendered differently than expected")
    system = found["system_prompt"].value
    if not (isinstance(system, ast.Constant) and isinstance(system.value, str)):
        raise DataError(f"{where}: system_prompt is not a string literal")
    return JudgePrompt(system.value, _user_pieces(found["user_prompt"].value, where))


def judge_prompt(data_dir: str | os.PathLike[str] | None = None) -> JudgePrompt:
    """The judge prompt of the data in use (read once per evaluator source file)."""
    return _read(str(data_files(data_dir).nl_evaluator_source))
