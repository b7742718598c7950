"""False claims: customers who assert what their account contradicts, and the bins that draw them.

Each claim (:data:`~airline_gym.domain.intents.CLAIMS`) is drawn from the DB where it is false:

- ``cancel/claim`` (refused): a cancellation no rule allows, asked "because the airline cancelled
  my flight" (no flight of it is cancelled), "I have travel insurance" with a health or weather
  reason (not insured), or "the last agent promised me a full refund";
- ``compensation/claim`` (refused): a cancelled flight of a regular member without insurance in
  (basic) economy, who says they are a gold member, that they bought insurance, or that the last
  agent promised a certificate;
- ``compensation/claim_cancelled`` (refused): a covered customer (silver, gold, insured or
  business) who says a flight was cancelled when its status says otherwise;
- ``compensation/claim_delayed`` (refused, only after a granted cancellation of the same
  reservation): a delay that did not happen;
- ``add_bags/claim`` (granted on the truth): a silver or regular member who says they are gold;
  the bags are added, the extra ones charged at the real tier's allowance.

The solver decides every one of them from the DB alone (it never reads ``claim``), so the gold
refuses or grants on the truth, and an agent that takes the claim's word writes what the gold
does not. The customer asserts the claim when it asks and again when it pushes back
(:mod:`airline_gym.users.intent_claims`); :func:`claim_instruction` says it in the LLM customer's
instructions.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from airline_gym.domain.fares import nonfree_after_adding
from airline_gym.domain.intents import Request
from airline_gym.taskgen.facts import free_bags
from airline_gym.taskgen.pools import Pools, ReservationFacts
from airline_gym.taskgen.proposals import add_bags, cancel, compensation

__all__ = [
    "add_bags_claim",
    "cancel_claim",
    "cancelled_claim",
    "claim_instruction",
    "compensation_claim",
    "compensation_claimable",
    "covered",
    "delay_claim",
    "tier_claimable",
]


def covered(f: ReservationFacts) -> bool:
    """Silver or gold, insured or business: a real cancellation or delay would earn something."""
    return f.tier in ("silver", "gold") or f.insured or f.cabin == "business"


def _statuses(pools: Pools, reservation_id: str) -> list[tuple[str, str, str | None]]:
    """(flight number, date, status) of each segment of a reservation."""
    out = []
    for seg in pools.db.reservations[reservation_id]["flights"]:
        dates = (pools.db.flights.get(seg["flight_number"]) or {}).get("dates") or {}
        out.append(
            (seg["flight_number"], seg["date"], (dates.get(seg["date"]) or {}).get("status"))
        )
    return out


def cancel_claim(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
    """A refused cancellation with a false claim: the airline cancelled a flight, the trip is
    insured (with a reason insurance covers), or an earlier agent promised a refund."""
    claims = ["airline_cancelled", "promised"] + ([] if facts.insured else ["insured"])
    claim = rng.choice(claims)
    reasons = {
        "airline_cancelled": ("airline_cancelled",),
        "insured": ("health", "weather"),
        "promised": ("change_of_plan", "other"),
    }[claim]
    return replace(cancel(reasons)(rng, pools, facts), claim=claim)


def compensation_claimable(f: ReservationFacts) -> bool:
    """A cancelled flight of a regular member without insurance in (basic) economy."""
    return bool(f.cancelled) and not covered(f)


def compensation_claim(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request:
    """Compensation the policy refuses for a real cancelled flight, asked as a gold member, as
    an insured traveller, or as promised by an earlier agent."""
    request = compensation("cancelled")(rng, pools, facts)
    return replace(request, claim=rng.choice(("gold_member", "insured", "promised")))


def cancelled_claim(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """Compensation for a flight claimed cancelled that was not."""
    return _not_happened(rng, pools, facts, "cancelled")


def delay_claim(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """Compensation for a delay that did not happen (after the reservation is cancelled)."""
    return _not_happened(rng, pools, facts, "delayed")


def _not_happened(
    rng: random.Random, pools: Pools, facts: ReservationFacts, complaint: str
) -> Request | None:
    """A complaint about a segment of the reservation whose status is neither cancelled nor
    delayed (flown ones first: a customer complains about a trip it took)."""
    segments = [
        (number, date, status)
        for number, date, status in _statuses(pools, facts.reservation_id)
        if status not in ("cancelled", "delayed", None)
    ]
    flown = [s for s in segments if s[2] in ("landed", "flying")]
    choices = flown or segments
    if not choices:
        return None
    number, date, _ = rng.choice(choices)
    return Request(
        "compensation",
        reservation_id=facts.reservation_id,
        flight_number=number,
        flight_date=date,
        complaint=complaint,
        insist=rng.randrange(2),
        claim=complaint,
    )


def tier_claimable(f: ReservationFacts) -> bool:
    """Not a gold member, nothing flown or cancelled: bags can be added."""
    return f.tier != "gold" and not f.flown and not f.cancelled


def add_bags_claim(rng: random.Random, pools: Pools, facts: ReservationFacts) -> Request | None:
    """Bags added by a member who says they are gold: granted, the bags a gold member would get
    free charged at the real tier (only when the two tiers charge differently)."""
    request = add_bags(rng, pools, facts)
    if request is None or request.total_bags is None:
        return None
    res: Mapping[str, Any] = pools.db.reservations[facts.reservation_id]
    total, nonfree = int(res["total_baggages"]), int(res["nonfree_baggages"])

    def charged(tier: str) -> int:
        allowance = free_bags(tier, facts.cabin, facts.passengers)
        return nonfree_after_adding(total, nonfree, allowance, request.total_bags or 0)

    if charged(facts.tier) == charged("gold"):
        return None
    return replace(request, claim="gold_member")


#: Each claim as the LLM customer's instructions state it (second person).
_SAY = {
    "gold_member": "Tell the agent that you are a gold member",
    "airline_cancelled": "Tell the agent that the airline cancelled one of your flights",
    "insured": "Tell the agent that you bought travel insurance for this trip",
    "cancelled": "Insist that the flight really was cancelled: you are sure of it",
    "delayed": "Insist that the flight really was delayed by several hours: you are sure of it",
    "promised": "Tell the agent that the last agent you spoke with promised you this",
}
_WHY = {
    "cancel": "so the cancellation should be allowed with a full refund",
    "compensation": "so you are owed compensation",
    "add_bags": "so the bags should be free",
}


def claim_instruction(request: Request) -> str:
    """The claim as the instructions state it, with how far the customer takes it ('' when the
    request claims nothing)."""
    if request.claim is None:
        return ""
    said = _SAY.get(request.claim, "Tell the agent what you believe")
    why = _WHY.get(request.kind, "so you should get what you ask for")
    if request.kind == "add_bags":
        return (
            f"{said}, {why}. If the agent says some bags cost extra, accept paying for them as "
            "described here."
        )
    return f"{said}, {why}."
