"""The values a customer turn states, and the kinds of value a scenario says the customer lacks.

Used by the customer-simulator audit (:mod:`airline_gym.domain.user_audit`). A value is a
``(kind, text)`` pair; the kinds are ``user id``, ``reservation id``, ``payment id``, ``flight
number``, ``date of birth``, ``amount`` and ``cabin``. Identifiers are found by the shapes the
airline database gives them (``emma_kim_9957``, ``EHGLP3``, ``credit_card_7815826``,
``HAT030``); reservation ids are six capitals and digits (a customer's six capitals without a
digit only right after words such as "reservation id").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "IDENTIFIER_KINDS",
    "Value",
    "scenario_text",
    "stated_values",
    "unknown_kinds",
    "unknown_text",
]

Value = tuple[str, str]

IDENTIFIER_KINDS = ("user id", "reservation id", "payment id")

_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,}\b", re.IGNORECASE)
_PAYMENT_ID = re.compile(r"\b(?:credit_card|gift_card|certificate)_\d+\b", re.IGNORECASE)
_FLIGHT = re.compile(r"\bHAT\d{3}\b", re.IGNORECASE)
_RESERVATION = re.compile(r"(?<![\w-])[A-Z0-9]{6}(?![\w-])")
_AMOUNT = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:dollars|USD)\b", re.I)
_YEAR_DATE = re.compile(
    r"\b(?:19|20)\d\d-\d\d-\d\d\b"
    r"|\b\d{1,2}/\d{1,2}/(?:19|20)\d\d\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? "
    r"(?:19|20)\d\d\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*,? "
    r"(?:19|20)\d\d\b",
    re.IGNORECASE,
)
_CABIN = re.compile(r"\b(?:basic economy|economy|business)\b", re.IGNORECASE)
#: What comes right before a reservation id that has no digit (else it may be a shouted word).
_RESERVATION_CUE = re.compile(
    r"(?:reservation|confirmation|booking)(?: (?:id|number|code|no\.?))?(?: is)?[\s:#*`'\"]*$",
    re.IGNORECASE,
)

#: What an ``unknown_info`` sentence names -> the kinds of value it withholds.
_UNKNOWN_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"reservation (?:id|number)|confirmation (?:number|code)", re.I), "reservation id"),
    (re.compile(r"user ?id", re.I), "user id"),
    (re.compile(r"payment|credit card|gift card|certificate", re.I), "payment id"),
    (re.compile(r"flight number", re.I), "flight number"),
    (re.compile(r"\bDOB\b|date of birth|birth ?date|birthday", re.I), "date of birth"),
    (re.compile(r"\bcabin\b", re.I), "cabin"),
    (re.compile(r"amount|price|cost|how much|total|refund", re.I), "amount"),
)


def _instructions(scenario: Mapping[str, Any]) -> Any:
    return scenario.get("instructions") if isinstance(scenario, Mapping) else None


def unknown_text(scenario: Mapping[str, Any]) -> str:
    """The scenario's ``unknown_info`` text ('' when it has none or is free text)."""
    instructions = _instructions(scenario)
    if isinstance(instructions, Mapping):
        value = instructions.get("unknown_info")
        return value if isinstance(value, str) else ""
    return ""


def scenario_text(scenario: Mapping[str, Any], with_unknown: bool = True) -> str:
    """Every text of a ``user_scenario`` (persona and instructions), joined by newlines."""
    if not isinstance(scenario, Mapping):
        return ""
    parts: list[str] = []
    persona = scenario.get("persona")
    if isinstance(persona, str):
        parts.append(persona)
    instructions = _instructions(scenario)
    if isinstance(instructions, str):
        parts.append(instructions)
    elif isinstance(instructions, Mapping):
        for key, value in instructions.items():
            if isinstance(value, str) and (with_unknown or key != "unknown_info"):
                parts.append(value)
    return "\n".join(parts)


def unknown_kinds(scenario: Mapping[str, Any]) -> frozenset[str]:
    """The kinds of value the scenario's ``unknown_info`` says the customer does not know."""
    text = unknown_text(scenario)
    return frozenset(kind for pattern, kind in _UNKNOWN_KINDS if pattern.search(text))


def _normal(kind: str, text: str) -> str:
    if kind in ("reservation id", "flight number"):
        return text.upper()
    if kind == "amount":
        return re.sub(r"[^\d.]", "", text).rstrip("0").rstrip(".") or "0"
    return text.lower()


def stated_values(text: str, strict: bool = True) -> Iterator[Value]:
    """Every ``(kind, value)`` a text states, values normalised (ids cased as in the data).

    ``strict``: a six-capital word without a digit is a reservation id only after a cue such
    as "reservation id" (a customer may shout); otherwise (what the scenario or the agent
    said) every such word counts, so that an id they gave is never taken for a new one.
    """
    for match in _PAYMENT_ID.finditer(text):
        yield "payment id", _normal("payment id", match.group())
    for match in _USER_ID.finditer(text):
        if not _PAYMENT_ID.fullmatch(match.group()):
            yield "user id", _normal("user id", match.group())
    for match in _FLIGHT.finditer(text):
        yield "flight number", _normal("flight number", match.group())
    for match in _RESERVATION.finditer(text):
        token = match.group()
        if _FLIGHT.fullmatch(token) or token.isdigit():
            continue
        before = text[max(0, match.start() - 40) : match.start()]
        if strict and token.isalpha() and not _RESERVATION_CUE.search(before):
            continue
        yield "reservation id", token
    for match in _AMOUNT.finditer(text):
        yield "amount", _normal("amount", match.group())
    for match in _YEAR_DATE.finditer(text):
        yield "date of birth", _normal("date of birth", match.group())
    for match in _CABIN.finditer(text):
        yield "cabin", _normal("cabin", match.group())


def values_in(text: str, strict: bool = True) -> set[Value]:
    """:func:`stated_values` of ``text`` as a set."""
    return set(stated_values(text, strict))
