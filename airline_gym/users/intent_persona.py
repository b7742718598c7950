"""How the offline intent customer words what it says, by persona; never what it decides.

:class:`Voice` dresses the sentences :class:`~airline_gym.users.intent_user.IntentPlayer` has
already chosen: the opening, a yes, the move to the next request, a nudge after a stall, a
push-back after a refusal. Every style keeps the parts an agent and the strict grader read
(the request statements of :mod:`~airline_gym.users.intent_words`, a yes at the start of its
turn, the leave-unsatisfied sentences); the words it adds hold no request statement, no
assent at the start of a sentence and no leave phrase (``tests/users/test_intent_persona.py``).

- plain: as before ("Hi!", the request, name and user id).
- ``terse``: no greeting, the shortest yes.
- ``chatty``: small talk around the opening and its thanks, a warm yes.
- ``impatient``: says it is in a hurry, pushes harder ("I don't have all day"); the customer
  also leaves after fewer stalls (:attr:`~airline_gym.domain.intents.Persona.patient`).
- ``confused``: names its trip's date before its reservation, apologises for mixing things up,
  and after a yes asks the agent to repeat what it is doing.
- ``several_at_once``: its first message states every request it has (those asked only after a
  refusal aside), numbered; it then takes them one at a time, as said.

>>> from airline_gym.domain.intents import Persona
>>> Voice(Persona(several_at_once=True)).opening(["Ask A.", "Ask B."], ["My user id is u_1."])
'Hi! I have 2 things to sort out today. First: Ask A. Second: Ask B. My user id is u_1.'
>>> Voice(Persona(terse=True)).yes(0)
'Yes.'
"""

from __future__ import annotations

from collections.abc import Sequence

from airline_gym.domain.intents import Persona

__all__ = ["AGENDA_RE_TEXT", "Voice"]

_ORDINAL = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth")
#: What marks a several-at-once opening (an agent reading the turn knows the statements that
#: follow are a to-do list, served in the order said).
AGENDA_RE_TEXT = r"\bI have \d+ things to sort out today\."

_YES = {
    "plain": ("Yes, please go ahead.", "Yes, that's right.", "Yes, I confirm."),
    "terse": ("Yes.", "Yes, go ahead.", "Yes, confirmed."),
    "chatty": (
        "Yes, please go ahead. Thank you for explaining it so clearly, that really helps.",
        "Yes, that's right. You've been so patient with me, I appreciate it.",
        "Yes, I confirm. My sister always says I overthink these things!",
    ),
    "impatient": (
        "Yes, go ahead, and please be quick.",
        "Yes, that's right. Just do it, please.",
        "Yes, I confirm. Can we move faster?",
    ),
    "confused": (
        "Yes, please go ahead. Sorry, could you repeat what you're changing once it's done?"
        " I get mixed up with these details.",
        "Yes, that's right, I think. Could you say it once more after you've done it?",
        "Yes, I confirm. Sorry, I lose track; please repeat the main points afterwards.",
    ),
}
_NEXT = {
    "plain": "I also have another request.",
    "terse": "Also:",
    "chatty": "Oh, and while I have you, there's one more thing.",
    "impatient": "Next thing, quickly.",
    "confused": "And, sorry, there was something else too.",
    "several_at_once": "Now the next thing I mentioned.",
}


class Voice:
    """The words of one persona (its first style decides; none: plain)."""

    def __init__(self, persona: Persona) -> None:
        self.persona = persona
        styles = persona.styles
        self.style = styles[0] if styles else "plain"

    def opening(self, asks: Sequence[str], identity: Sequence[str], when: str | None = None) -> str:
        """The first message: ``asks`` (the request statements said now), then ``identity``
        (name, user id). ``when``: its trip's date, which a confused customer says first."""
        persona = self.persona
        parts = [] if persona.terse else ["Hi!"]
        if persona.chatty:
            parts.append(
                "I hope your day is going well. It's been such a hectic week, with work and "
                "the kids and everything, so I'm glad to finally get through to someone."
            )
        if persona.confused:
            trip = f"my trip on {when}" if when else "my account"
            parts.append(f"It's about {trip}... sorry, I'm getting mixed up, let me start again.")
        if persona.several_at_once and len(asks) > 1:
            parts.append(f"I have {len(asks)} things to sort out today.")
            parts += [f"{_ORDINAL[i % len(_ORDINAL)]}: {a}" for i, a in enumerate(asks)]
        else:
            parts += list(asks[:1])
        parts += identity
        if not persona.patient:
            parts.append("I'm in a hurry, so please be quick.")
        return " ".join(parts)

    def yes(self, n: int) -> str:
        """The ``n``-th yes of the call (they take turns, so none is said three times in a row)."""
        forms = _YES.get(self.style, _YES["plain"])
        return forms[n % len(forms)]

    def next_request(self) -> str:
        """The words before the next request is said, after one is settled."""
        return _NEXT.get(self.style, _NEXT["plain"])

    def nudge(self, text: str) -> str:
        """A restatement after a stall."""
        if not self.persona.patient:
            return f"I don't have all day. {text}"
        if self.persona.confused:
            return f"Sorry, I'm lost. {text}"
        return text

    def push(self, text: str) -> str:
        """A push-back after a refusal."""
        if not self.persona.patient:
            return f"{text} I'm in a real hurry here."
        if self.persona.chatty:
            return f"{text} It's been a really tough month for me."
        return text
