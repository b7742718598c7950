"""The customer's persona in generated tasks: which style each task gets, and how the LLM
customer's instructions state it.

:func:`dress` gives an intent a persona drawn from a hash of the intent itself, so the persona
is deterministic and draws nothing from the generator's random stream (the mix, the pools and
every other figure stay as they were). About 11% of tasks get each style (:data:`SHARES`), the
rest none. ``several_at_once`` needs two requests to state at once: a task with one gets the other
styles only, and a task with several gets ``several_at_once`` half the time.

>>> from airline_gym.domain.intents import Intent, Request
>>> one = Intent("u", "U", (Request("cancel", "ABC123"),))
>>> dress(one).persona == dress(one).persona  # a function of the intent
True
>>> persona_lines(Persona(chatty=True))[0].startswith("You are friendly and talkative")
True
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from airline_gym.domain.intents import Intent, Persona

__all__ = ["SHARES", "agenda_line", "dress", "persona_lines"]

_STYLE_PERSONAS = {
    "terse": Persona(terse=True),
    "chatty": Persona(chatty=True),
    "impatient": Persona(patient=False),
    "confused": Persona(confused=True),
    "several_at_once": Persona(several_at_once=True),
}
#: Style -> its share among intents of one request, and among intents of several (the rest:
#: plain). Tasks of several requests are about a fifth of the mix.
SHARES: dict[str, tuple[float, float]] = {
    "terse": (0.12, 0.08),
    "chatty": (0.12, 0.08),
    "impatient": (0.12, 0.08),
    "confused": (0.12, 0.08),
    "several_at_once": (0.0, 0.5),
}


def _askable(intent: Intent) -> int:
    return sum(not r.if_refused for r in intent.requests)


def _unit(intent: Intent) -> float:
    """A number in [0, 1) fixed by the customer and its requests (their dataclass ``repr``:
    plain values only, so the same on every run)."""
    digest = hashlib.sha256(repr((intent.user_id, intent.requests)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def dress(intent: Intent) -> Intent:
    """``intent`` with a persona of :data:`SHARES` (or none)."""
    column = 1 if _askable(intent) > 1 else 0
    u, edge = _unit(intent), 0.0
    for style, shares in SHARES.items():
        edge += shares[column]
        if u < edge:
            return replace(intent, persona=_STYLE_PERSONAS[style])
    return replace(intent, persona=Persona())


def agenda_line(persona: Persona) -> str:
    """The line before a customer's numbered requests."""
    if persona.several_at_once:
        return (
            "In your first message, tell the agent about everything in this list that you "
            "ask for in any case, all at once; then deal with them one at a time, in this order:"
        )
    return "Ask for one thing at a time, in this order, and finish each first:"


def persona_lines(persona: Persona) -> list[str]:
    """How the persona talks, in the second person (the last lines of the instructions)."""
    lines = []
    if persona.terse:
        lines.append("You answer in as few words as you can.")
    if not persona.patient:
        lines.append("You are in a hurry and lose patience when the agent stalls.")
        lines.append("Say early on that you are short on time, and urge the agent to hurry.")
    if persona.chatty:
        lines.append(
            "You are friendly and talkative: you add a little small talk about your busy week "
            "to your messages, but you never make up facts about your trips or your account."
        )
    if persona.confused:
        lines.append(
            "You are easily confused. When you explain why you are calling, you mention the "
            "date of your trip before you say which reservation it is, and you ask the agent to "
            "repeat what they are about to do when it gets complicated."
        )
    return lines
