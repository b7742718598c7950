"""What the policy decides for a customer's requests: the policy solver's output.

The solver (``airline_gym.taskgen.solver``) reads the DB and an :class:`~.intents.Intent`
and returns a :class:`Solution`: one :class:`Decision` per request, in the intent's order. The
generator turns a solution into a task's gold (``evaluation_criteria``). The scripted customer never
reads it: it decides from its own wishes and the episode's DB. Pure data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["OUTCOMES", "Call", "Decision", "Solution"]

Outcome = Literal["granted", "refused", "transfer", "declined"]
#: ``declined``: the policy allows it but the customer says no (over their budget cap, say).
OUTCOMES: tuple[str, ...] = ("granted", "refused", "transfer", "declined")


@dataclass(frozen=True)
class Call:
    """One tool call of the agent's: a tool name and its arguments."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Decision:
    """The policy's answer to one request.

    ``clause``: the policy rule applied, quoted briefly in our words (for people reading a task).
    ``reads``: the lookups any correct agent must make before deciding (user, reservation,
    flight status, ...); ``writes``: the DB-changing calls, in order (including
    ``transfer_to_human_agents``). ``say``: values the agent must tell the customer (numbers,
    as ``communicate_info`` holds them). ``amount``: the money at stake in dollars (fee, refund,
    certificate), None when there is none. ``details``: the concrete choices the customer's rules
    came to (flight numbers, price per passenger, ...), for the instructions and the dialogue.
    ``ill_posed``: why a task resting on this decision could not be solved for sure by following
    the policy (a tie between flights that nobody breaks, new flights that do not connect); the
    generator keeps no such task. ``choices``: how many options fitted each flight choice the
    rule made (the generator keeps a granted choice only among enough options: a guess must not
    find it).
    """

    request_index: int
    outcome: Outcome
    clause: str
    reads: tuple[Call, ...] = ()
    writes: tuple[Call, ...] = ()
    say: tuple[str, ...] = ()
    amount: int | None = None
    details: Mapping[str, Any] | None = None
    ill_posed: tuple[str, ...] = ()
    choices: tuple[int, ...] = ()


@dataclass(frozen=True)
class Solution:
    """The decisions for every request of an intent, in order."""

    decisions: tuple[Decision, ...]

    @property
    def writes(self) -> tuple[Call, ...]:
        """Every DB-changing call, in the order the agent makes them."""
        return tuple(call for d in self.decisions for call in d.writes)

    @property
    def reads(self) -> tuple[Call, ...]:
        """Every required lookup, without repeats, in first-needed order."""
        seen: list[Call] = []
        for decision in self.decisions:
            for call in decision.reads:
                if call not in seen:
                    seen.append(call)
        return tuple(seen)

    @property
    def ill_posed(self) -> tuple[str, ...]:
        """Why a task built on these decisions would be ill-posed (empty: well-posed)."""
        return tuple(why for d in self.decisions for why in d.ill_posed)

    @property
    def say(self) -> tuple[str, ...]:
        """Everything the agent must communicate."""
        return tuple(value for d in self.decisions for value in d.say)
