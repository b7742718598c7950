"""The offline customer's fallbacks: a request it asks only when the one before it was not done.

A request with ``if_refused`` (:class:`~airline_gym.domain.intents.Request`) is the customer's
second choice ("if you can't change it, cancel it if you can"; "if business is too dear, then
economy"). The customer asks it only after hearing that the request before it was refused, or
after declining that one itself (over its budget); when the request before it was granted, the
customer never asks it, nor any fallback after it.
"""

from __future__ import annotations

from airline_gym.domain.intents import Intent

__all__ = ["lead_in", "next_index"]


def next_index(intent: Intent, index: int, refused: bool) -> int:
    """The request the customer asks after request ``index`` ended (``refused``: refused or
    declined): the next one, skipping the fallbacks a granted request leaves unasked."""
    following = index + 1
    requests = intent.requests
    if refused:
        return following
    while following < len(requests) and requests[following].if_refused:
        following += 1
    return following


def lead_in(intent: Intent, index: int, otherwise: str) -> str:
    """How the customer brings up request ``index`` after the one before it: a fallback as
    such, any other request with ``otherwise`` (the persona's words)."""
    if index < len(intent.requests) and intent.requests[index].if_refused:
        return "In that case,"
    return otherwise
