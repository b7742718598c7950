"""A stand-in for the customer lane's instructions writer (removed once it lands)."""

from __future__ import annotations

from typing import Any

from airline_gym.domain.decisions import Solution
from airline_gym.domain.intents import Intent


def write_instructions(intent: Intent, solution: Solution) -> dict[str, Any]:
    """Minimal second-person instructions naming every request."""
    asks = "; ".join(f"{r.kind} {r.reservation_id or ''}".strip() for r in intent.requests)
    return {
        "reason_for_call": f"You want: {asks}.",
        "known_info": f"You are {intent.name}.\nYour user id is {intent.user_id}.",
        "unknown_info": None,
        "task_instructions": "Accept what the agent says the policy allows.",
    }
