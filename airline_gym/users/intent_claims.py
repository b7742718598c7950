"""What the offline customer says of a false claim (``Request.claim``): it asserts the claim when
it asks, says it again each time it pushes back, and accepts the refusal after ``insist``
push-backs, like any other refusal. The claim never changes what it wants or what it accepts:
those come from its wishes and the live DB (:mod:`airline_gym.users.intent_wishes`).

The sentences avoid the request statements an agent reads (``I'd like to ...``, ``My flight ...
was ...``) and the cancellation reasons' answers, so they add a claim and nothing else.

>>> from airline_gym.domain.intents import Request
>>> asserting(Request("cancel", "ABC123", claim="promised"), "I'd like to cancel it.")
"I'd like to cancel it. The last agent I spoke with promised me a full refund."
>>> insisting(Request("add_insurance", "ABC123"), "Please check again.")
'Please check again.'
"""

from __future__ import annotations

from airline_gym.domain.intents import Request

__all__ = ["asserting", "claim_words", "insisting"]

#: The claim in the customer's words, by (claim, request kind); kind "" for any other kind.
_WORDS: dict[tuple[str, str], str] = {
    ("gold_member", "add_bags"): "I'm a gold member, so these bags should be free.",
    ("gold_member", ""): "I'm a gold member, so I expect to be looked after.",
    ("airline_cancelled", ""): "The airline cancelled my flight, so I want my money back.",
    ("insured", ""): "I bought travel insurance for this trip, so it's covered.",
    ("cancelled", ""): "I'm certain of it: that flight never flew.",
    ("delayed", ""): "It left hours late, I was stuck at the airport.",
    ("promised", "cancel"): "The last agent I spoke with promised me a full refund.",
    ("promised", "compensation"): "The last agent I spoke with promised me a certificate.",
    ("promised", ""): "The last agent I spoke with promised me this.",
}
#: Said before a push-back, by claim.
_AGAIN: dict[str, str] = {
    "gold_member": "But I'm a gold member!",
    "airline_cancelled": "But the airline cancelled my flight!",
    "insured": "But I have travel insurance!",
    "cancelled": "But that flight was cancelled, I'm sure of it!",
    "delayed": "But that flight was delayed, I was there!",
    "promised": "But the last agent promised me!",
}


def claim_words(request: Request) -> str:
    """The claim of ``request`` as the customer states it ('' when it claims nothing)."""
    if request.claim is None:
        return ""
    return _WORDS.get((request.claim, request.kind)) or _WORDS.get((request.claim, ""), "")


def asserting(request: Request, said: str) -> str:
    """``said`` (the request in the customer's words) with its claim after it."""
    words = claim_words(request)
    return f"{said} {words}" if words else said


def insisting(request: Request, push: str) -> str:
    """A push-back after a refusal, with the claim said again before it."""
    again = _AGAIN.get(request.claim or "", "")
    return f"{again} {push}" if again else push
