"""The airline ``calculate`` tool, reimplemented without ``eval``.

The reference checks the character set and then runs
``str(round(float(eval(expression, {"__builtins__": None}, {})), 2))``. Here the expression is
parsed with :mod:`ast` and evaluated by a small iterative interpreter that applies the Python
operators themselves, so results and error messages are Python's own.

Unlike the reference, the work is bounded. Integers are computed exactly up to
:data:`MAX_INT_BITS` bits. A larger integer is never built: it is kept as a :class:`_Huge`, which
records only its sign and a lower bound on its bit length. Operations on such values return the
outcome Python would reach (e.g. ``9**9**9`` → ``int too large to convert to float``,
``1/9**9**9`` → ``0.0``) where the outcome follows from sign and size alone. Otherwise they raise
:class:`CalculationError` with the ``result too large`` message (e.g. ``9**9**9 - 9**9**9``).
Expressions longer than :data:`MAX_EXPRESSION_LENGTH` are refused.

Other deviations from the reference: syntax errors read ``Invalid expression: <parser message>``
(too deep nesting reads ``Invalid expression: too deeply nested``, where the reference lets a
``RecursionError`` or ``MemoryError`` escape), and a call whose arguments use ``*``/``**``
unpacking (``(1)(*2)``) is refused as unsupported.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, NoReturn, TypeAlias, cast

from airline_gym.errors import ActionError

__all__ = ["MAX_EXPRESSION_LENGTH", "MAX_INT_BITS", "CalculationError", "calculate"]

ALLOWED_CHARACTERS = frozenset("0123456789+-*/(). ")
"""The reference's character whitelist."""

MAX_EXPRESSION_LENGTH = 10_000
"""Longest accepted expression, in characters."""

MAX_INT_BITS = 8_192
"""Largest integer computed exactly, in bits (about 2,466 decimal digits, 8 times the float range).

At this size one operation takes well under 0.1 ms. Together with the cap on expression length,
this keeps even adversarial input under about 50 ms.
"""

_FLOAT_OVERFLOW_BITS = 1025  # an int with this many bits is >= 2**1024: float() overflows
_PROXY_BITS = 2048  # stands in for a _Huge where only "a big int of this sign" matters
_MAX_SAFE_EXPONENT = 2**53  # exponents are clamped to this when estimating a lower bound


class CalculationError(ActionError):
    """Raised when an expression cannot be evaluated; ``str(exc)`` is the agent-facing message."""


@dataclass(frozen=True)
class _Huge:
    """An integer too large to compute: its sign (0 if unknown) and a lower bound on its bits."""

    sign: int
    bits: float


_Value: TypeAlias = int | float | complex | tuple[()] | EllipsisType | _Huge
_Int: TypeAlias = int | _Huge

_BINARY: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def calculate(expression: str) -> str:
    """Evaluate ``expression`` like the reference tool and return ``str(round(value, 2))``.

    Raises:
        CalculationError: with the message the reference would show (see the module docstring).
    """
    if not ALLOWED_CHARACTERS.issuperset(expression):
        raise CalculationError("Invalid characters in expression")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CalculationError(
            f"Expression too long (at most {MAX_EXPRESSION_LENGTH:,} characters)"
        )
    program = _compile(_parse(expression))
    try:
        value = _run(program)
        if isinstance(value, _Huge):
            value = _proxy(value)  # float() raises exactly as it would for the real value
        return str(round(float(value), 2))  # type: ignore[arg-type]
    except CalculationError:
        raise
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise CalculationError(str(exc)) from None


# --- parsing -------------------------------------------------------------------------------------
def _parse(expression: str) -> ast.expr:
    """Parse like ``eval`` does: leading spaces are ignored."""
    try:
        return ast.parse(expression.lstrip(" "), mode="eval").body
    except SyntaxError as exc:
        raise CalculationError(f"Invalid expression: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise CalculationError("Invalid expression: too deeply nested") from None
    except ValueError as exc:
        raise CalculationError(f"Invalid expression: {exc}") from None


def _compile(root: ast.expr) -> list[ast.expr]:
    """Check the supported node types and return the nodes in evaluation (post-)order."""
    program: list[ast.expr] = []
    stack: list[tuple[ast.expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            program.append(node)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_operands(node)))
    return program


def _operands(node: ast.expr) -> list[ast.expr]:
    """The operands of a supported node, left to right; unsupported nodes raise."""
    if isinstance(node, ast.Constant):
        if type(node.value) in (int, float) or node.value is Ellipsis:
            return []
    elif isinstance(node, ast.Tuple):
        if not node.elts:
            return []
    elif isinstance(node, ast.BinOp):
        if type(node.op) in _BINARY:
            return [node.left, node.right]
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) in _UNARY:
            return [node.operand]
    elif isinstance(node, ast.Call):
        if not node.keywords and not any(isinstance(arg, ast.Starred) for arg in node.args):
            return [node.func, *node.args]
        raise CalculationError("Unsupported expression: argument unpacking in a call")
    raise CalculationError(f"Unsupported expression: {type(node).__name__}")


# --- evaluation ----------------------------------------------------------------------------------
def _run(program: list[ast.expr]) -> _Value:
    """Evaluate post-ordered nodes with a value stack, in Python's evaluation order."""
    stack: list[_Value] = []
    for node in program:
        if isinstance(node, ast.Constant):
            value = node.value  # _compile admits numbers and Ellipsis only
            stack.append(_bounded(value) if type(value) is int else cast(_Value, value))
        elif isinstance(node, ast.Tuple):
            stack.append(())
        elif isinstance(node, ast.UnaryOp):
            stack.append(_unary(node.op, stack.pop()))
        elif isinstance(node, ast.BinOp):
            right = stack.pop()
            stack.append(_binary(node.op, stack.pop(), right))
        else:
            assert isinstance(node, ast.Call)
            del stack[len(stack) - len(node.args) :]
            name = "int" if isinstance(stack[-1], _Huge) else type(stack[-1]).__name__
            raise TypeError(f"'{name}' object is not callable")
    return stack.pop()


def _unary(op: ast.unaryop, value: _Value) -> _Value:
    """Apply ``+``/``-``."""
    if isinstance(value, _Huge):
        return value if isinstance(op, ast.UAdd) else _Huge(-value.sign, value.bits)
    return _UNARY[type(op)](value)  # type: ignore[no-any-return]


def _binary(op: ast.operator, left: _Value, right: _Value) -> _Value:
    """Apply a binary operator, keeping integers within :data:`MAX_INT_BITS`."""
    func = _BINARY[type(op)]
    left_int = isinstance(left, (int, _Huge))
    right_int = isinstance(right, (int, _Huge))
    if isinstance(left, _Huge) or isinstance(right, _Huge):
        if not (left_int and right_int):  # a float, complex, () or ... operand
            _raise_like(lambda: func(_proxy_or_value(left), _proxy_or_value(right)))
        return _huge_binary(op, left, right)  # type: ignore[arg-type]
    if left_int and right_int:
        return _int_binary(op, left, right)  # type: ignore[arg-type]
    return func(left, right)  # type: ignore[return-value]


def _int_binary(op: ast.operator, left: int, right: int) -> _Value:
    """Integer arithmetic, refusing to build an integer far beyond :data:`MAX_INT_BITS`."""
    if isinstance(op, ast.Mult) and left and right:
        bits = left.bit_length() + right.bit_length() - 1  # the product has at least this many
        if bits > MAX_INT_BITS:
            return _huge(_sign(left) * _sign(right), bits)
    elif isinstance(op, ast.Pow) and right >= 0:
        if abs(left) <= 1:  # cheap, whatever the exponent's size
            return 1 if right == 0 or left == 1 or (left == -1 and right % 2 == 0) else left
        estimate = min(right, _MAX_SAFE_EXPONENT) * math.log2(abs(left))
        if estimate > MAX_INT_BITS + 1:
            sign = -1 if left < 0 and right % 2 else 1
            return _huge(sign, estimate * (1 - 1e-9))  # the result has more bits than this
    result = _BINARY[type(op)](left, right)
    return _bounded(result) if isinstance(result, int) else result  # type: ignore[return-value]


def _huge_binary(op: ast.operator, left: _Int, right: _Int) -> _Value:
    """Integer arithmetic with at least one :class:`_Huge` operand.

    Each rule returns what Python would compute, deduced from signs and size bounds. When the
    outcome depends on digits that were never computed, :func:`_too_large` is raised.
    """
    if isinstance(op, ast.Sub):
        op, right = ast.Add(), _negate(right)
    if isinstance(op, ast.Add):
        big, other = (left, right) if isinstance(left, _Huge) else (right, left)
        assert isinstance(big, _Huge)
        if isinstance(other, int):
            if other.bit_length() <= big.bits - 2:  # |other| <= |big| / 2
                return _huge(big.sign, big.bits - 1)
        elif big.sign == other.sign != 0:
            return _huge(big.sign, max(big.bits, other.bits))
    elif isinstance(op, ast.Mult):
        if left == 0 or right == 0:
            return 0
        return _huge(_sign(left) * _sign(right), _bits(left) + _bits(right) - 1)
    elif isinstance(op, ast.Div):
        if isinstance(right, int):  # huge / int
            if right == 0 or left.bits - 1 - right.bit_length() >= 1024:  # type: ignore[union-attr]
                # ZeroDivisionError, or a quotient beyond the float range (OverflowError)
                _raise_like(lambda: (1 << (right.bit_length() + 1026)) / right)
        elif (  # int / huge: so tiny that it rounds to a signed zero
            isinstance(left, int)
            and right.sign
            and (left == 0 or left.bit_length() - right.bits <= -1077)
        ):
            return left / (right.sign << (left.bit_length() + 1100))
    elif isinstance(op, ast.FloorDiv):
        if isinstance(right, int):  # huge // int
            if right == 0:
                _raise_like(lambda: 1 // right)
            return _huge(_sign(left) * _sign(right), _bits(left) - 1 - right.bit_length())
        if isinstance(left, int):  # int // huge: 0 or -1
            if left == 0:
                return 0
            if right.sign and left.bit_length() <= right.bits - 1:
                return 0 if (left > 0) == (right.sign > 0) else -1
    else:
        assert isinstance(op, ast.Pow)
        if isinstance(right, int):  # huge ** int
            if right < 0:  # float power: converting the base overflows
                _raise_like(lambda: _proxy_or_value(left) ** right)
            if right == 0:
                return 1
            sign = _sign(left) if right % 2 else 1
            return _huge(sign, min(right, _MAX_SAFE_EXPONENT) * (_bits(left) - 1) + 1)
        if right.sign < 0:  # float power: converting the exponent overflows
            _raise_like(lambda: _proxy_or_value(left) ** _proxy(right))
        if right.sign > 0:
            if left in (0, 1):
                return left
            if left != -1:  # |left| >= 2 raised to at least 2 ** (right.bits - 1)
                sign = 1 if _sign(left) > 0 else 0  # an unknown parity hides a negative sign
                return _huge(sign, 2.0 ** min(right.bits - 1, 1000) * (_bits(left) - 1) + 1)
    _too_large()


def _bounded(value: int) -> _Int:
    """``value``, or a :class:`_Huge` standing in for it when it exceeds the bound."""
    if value.bit_length() > MAX_INT_BITS:
        return _Huge(_sign(value), value.bit_length())
    return value


def _huge(sign: int, bits: float) -> _Huge:
    """A :class:`_Huge`, provided the bound still guarantees float overflow."""
    if bits < _FLOAT_OVERFLOW_BITS:
        _too_large()
    return _Huge(sign, bits)


def _too_large() -> NoReturn:
    """Refuse to go on: the exact result depends on digits that were never computed."""
    raise CalculationError(f"result too large (integers are limited to {MAX_INT_BITS:,} bits)")


def _raise_like(compute: Callable[[], object]) -> NoReturn:
    """Raise the error that ``compute`` (a cheap stand-in for the real operation) raises."""
    compute()
    _too_large()  # unreachable when the stand-in is chosen correctly


def _proxy(value: _Huge) -> int:
    """A cheap int that fails like ``value`` on float conversion, indexing and zero division."""
    return (value.sign or 1) << _PROXY_BITS


def _proxy_or_value(value: _Value) -> Any:  # an operand for Python's own arithmetic
    return _proxy(value) if isinstance(value, _Huge) else value


def _negate(value: _Int) -> _Int:
    return _Huge(-value.sign, value.bits) if isinstance(value, _Huge) else -value


def _sign(value: _Int) -> int:
    if isinstance(value, _Huge):
        return value.sign
    return (value > 0) - (value < 0)


def _bits(value: _Int) -> float:
    return value.bits if isinstance(value, _Huge) else value.bit_length()
