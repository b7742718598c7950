"""The customer-simulator audit: customer turns that break the customer's scenario.

:func:`audit_conversation` reads a task's ``user_scenario`` and a simulation's messages (tau2's
format: ``role`` ``assistant``/``user``/``tool``, ``content``, ``tool_calls``) and returns one
flag per offending customer turn and kind: ``{"kind", "message_index", "evidence"}``, where
``message_index`` indexes ``messages`` and ``evidence`` quotes the turn. One small rule per kind:

- ``premature_stop``: the customer ends the conversation right after the agent asked for a
  confirmation or announced an action, without declining it, and no write followed;
- ``leak``: the customer states a value of a kind its ``unknown_info`` says it does not know (or a
  value written in ``unknown_info``) before the agent said it;
- ``invention``: an identifier (user, reservation, payment) in neither the scenario nor anything
  the agent said before;
- ``role_break``: tool-call syntax, the agent's greeting, or the customer speaking as the agent
  (or as an assistant: "I'm here to help ...", "What's on your mind?");
- ``empty_or_repeated``: an empty turn, a turn of 6 words or more that repeats the customer's
  previous turn word for word, or the same short text as the two customer turns before it;
- ``unwarranted_transfer``: ``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` although the agent did
  not transfer and the instructions give no reason to.

The agent's words count only as what the customer saw: the agent's message texts, never tool
results or call arguments. Of a message over 8,000 characters, the first and last 4,000 are read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.domain.transcript import tool_calls
from airline_gym.domain.user_values import (
    IDENTIFIER_KINDS,
    Value,
    scenario_text,
    unknown_kinds,
    unknown_text,
    values_in,
)

__all__ = ["AUDIT_KINDS", "RULES", "Flag", "audit_conversation", "count_kinds"]

Flag = dict[str, Any]
Messages = Sequence[Mapping[str, Any]]
Scenario = Mapping[str, Any]

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
_ENDINGS = (STOP, TRANSFER, OUT_OF_SCOPE)
_EVIDENCE_CHARS = 400
#: Words from which a customer turn said again word for word is flagged the second time.
REPEAT_WORDS = 6
#: The characters of a message the rules read (head and tail): real turns are far shorter
#: (at most 2,862 in the shared runs), and the regular expressions stay fast on hostile ones.
_READ_CHARS = 8_000

_CONFIRM = re.compile(
    r"\b(?:would you like (?:me|us) to|shall i|should i|do you want (?:me|us) to|"
    r"(?:please|can you|could you|do you) confirm|confirm (?:that|if|whether|you)|"
    r"(?:would|do) you (?:like|want|wish) to (?:proceed|go ahead|continue|confirm)|"
    r"(?:proceed|go ahead)\s*\?|yes/no|yes or no|reply [\"“*]*yes|(?:ok|okay) to proceed)",
    re.IGNORECASE,
)
_ANNOUNCE = re.compile(
    r"\b(?:i(?:'ll| will| am going to|'m going to) (?:now |go ahead and |proceed to )?|"
    r"let me (?:now |go ahead and )?)(?:cancel|book|change|modify|update|upgrade|add|remove|"
    r"process|issue|proceed)",
    re.IGNORECASE,
)
#: What a write is called in words (a tool call that changes the database).
_WRITE_WORDS = re.compile(
    r"\b(?:cancel\w*|book\w*|chang\w*|modif\w*|upgrad\w*|downgrad\w*|add\w*|"
    r"updat(?:e|ing) (?:your|the|it|my|this reservation)|"
    r"remov\w*|refund\w*|issu\w*|process\w*|proceed\w*|purchas\w*|charg\w*|appl(?:y|ied)|"
    r"switch\w*|certificate|compensation)\b",
    re.IGNORECASE,
)
_POINTER = re.compile(r"\b(?:that|this|it|these|those|them)\b", re.IGNORECASE)
_TRANSFER_WORDS = re.compile(r"transfer|human agent|supervisor|representative", re.IGNORECASE)
_CLAUSE_END = re.compile(r"(?<=[.!?:])\s+|\n+|;|,\s*and\s|\s+(?:—|-)\s+")
#: Saying no to the pending action (not any "no": "no way to change the date, so cancel it").
_DECLINE = re.compile(
    r"^\W*(?:no|nope)\b|\bno,? thanks?\b|\bnever ?mind\b|\bcancel that\b|\bleave it\b"
    r"|\bkeep (?:it|my|the)\b|\brather not\b|\bhold off\b|\bnot (?:now|yet|at this time)\b"
    r"|\bas is\b|\b(?:don'?t|do not|won'?t|will not|not)\s+(?:want to |wish to |like to )?"
    r"(?:proceed|go ahead|move forward|make (?:any|the|these|this) changes?|cancel|book|change|"
    r"upgrade|modify|do (?:it|that|this))\b",
    re.IGNORECASE,
)
_AFFIRM = re.compile(
    r"\b(?:yes|yeah|yep|yup|sure|ok|okay|i confirm|confirmed|please do|sounds good|that works|"
    r"i authori[sz]e|i agree|i accept|(?:please|you can|you may|let'?s) (?:go ahead|proceed))\b"
    r"|^\W*(?:go ahead|proceed)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:please|go ahead and)\s+(?:go ahead and\s+|do\s+)?(?:cancel|book|change|modify|update|"
    r"upgrade|downgrade|add|remove|refund|issue|process|proceed|apply|switch|make the)\b"
    r"|\bi authori[sz]e\b.*" + _WRITE_WORDS.pattern,
    re.IGNORECASE,
)
_TOOL_SYNTAX = re.compile(
    r"<tool_call>|<function|\"(?:name|tool_name)\"\s*:\s*\"[a-z_]+\"\s*,\s*\"(?:arguments|parameters)\""
    r"|\bfunctions\.[a-z_]+\s*\(|\b(?:get_user_details|get_reservation_details|"
    r"search_direct_flight|search_onestop_flight|book_reservation|cancel_reservation|"
    r"update_reservation_\w+|send_certificate|transfer_to_human_agents|calculate|"
    r"list_all_airports|get_flight_status)\s*\(",
    re.IGNORECASE,
)
_AGENT_PHRASES = re.compile(
    r"\bhow (?:can|may) i (?:help|assist) you\b|\bis there anything else i can (?:help|do|assist)"
    r"|\bthank you for (?:contacting|calling|choosing)\b|\bthank you for confirming your\b"
    r"|\bour system (?:cannot|can't|shows)\b|\bper our policy\b"
    r"|\b(?:i|we) can (?:certainly )?help you\b|\bi(?:'m| am) here to (?:help|assist)\b"
    r"|\bwhat(?:'s| is) on your mind\b|\bhow can i be of (?:help|assistance)\b"
    r"|\btransfer you\b|\b(?:email|send) you (?:a|the)\b"
    r"|^\s*(?:agent|assistant|representative)\s*:"
    r"|\bi(?:'ve| have) (?:successfully )?(?:cancelled|canceled|booked|updated|modified|issued)"
    r" your\b",
    re.IGNORECASE | re.MULTILINE,
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|don'?t|can'?t|cannot|unable|without)\b|n't\b", re.IGNORECASE
)
_TRANSFER_REASON = re.compile(
    r"transfer|human|supervisor|manager|representative|real person|out of scope", re.IGNORECASE
)


def _text(message: Mapping[str, Any]) -> str:
    """A message's text; of a huge one only its head and tail (where an ending token is)."""
    content = message.get("content")
    if not isinstance(content, str):
        return ""
    if len(content) > _READ_CHARS:
        half = _READ_CHARS // 2
        return f"{content[:half]} … {content[-half:]}"
    return content


def _flag(kind: str, index: int, evidence: str) -> Flag:
    evidence = " ".join(evidence.split())
    if len(evidence) > _EVIDENCE_CHARS:
        evidence = evidence[: _EVIDENCE_CHARS - 1] + "…"
    return {"kind": kind, "message_index": index, "evidence": evidence}


def _customer_turns(messages: Messages) -> list[int]:
    return [i for i, m in enumerate(messages) if m.get("role") == "user"]


def _agent_said(messages: Messages, before: int) -> set[Value]:
    """Every value in the agent's message texts before index ``before``."""
    said: set[Value] = set()
    for message in messages[:before]:
        if message.get("role") == "assistant":
            said |= values_in(_text(message), strict=False)
    return said


def _last_agent_text(messages: Messages, before: int) -> tuple[int, str] | None:
    for index in range(before - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user":
            return None
        if message.get("role") == "assistant" and _text(message).strip():
            return index, _text(message)
    return None


# --- one rule per kind ------------------------------------------------------------------------
def _clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE_END.split(text) if c.strip()]


def _asks_to_write(agent_text: str) -> bool:
    """Whether the agent asks to confirm, or announces, a write (not a transfer)."""
    clauses = _clauses(agent_text)
    for i, clause in enumerate(clauses):
        if not (_CONFIRM.search(clause) or _ANNOUNCE.search(clause)):
            continue
        if _TRANSFER_WORDS.search(clause):
            continue
        if _WRITE_WORDS.search(clause):
            return True
        if i and _POINTER.search(clause):  # "Would you like me to do that?": the clause before
            previous = clauses[i - 1]
            if _WRITE_WORDS.search(previous) and not _TRANSFER_WORDS.search(previous):
                return True
    return False


def _without_endings(text: str) -> str:
    for token in _ENDINGS:
        text = text.replace(token, " ")
    return text.strip()


def premature_stop(scenario: Scenario, messages: Messages) -> list[Flag]:
    """The customer ends the call on a write it accepted or asked for, before any write.

    Fires when the customer's ending turn follows an agent message that asks to confirm (or
    announces) a write, and the customer accepts it or says nothing but the ending; or when
    the ending turn itself asks for a write. Accepting a transfer is not a write; a turn that
    declines anything ("no", "don't", ...) never fires.
    """
    flags = []
    for index in _customer_turns(messages):
        text = _text(messages[index])
        if not any(token in text for token in _ENDINGS):
            continue
        words = _without_endings(text)
        if _DECLINE.search(words):
            continue
        own = " ".join(c for c in _clauses(words) if not _TRANSFER_WORDS.search(c))
        asked = _last_agent_text(messages, index)
        start = asked[0] if asked else index
        pending = asked is not None and _asks_to_write(asked[1])
        accepts = not words or bool(_AFFIRM.search(own))
        if not ((pending and accepts) or _REQUEST.search(own)):
            continue
        if any(c.name in WRITE_TOOLS for c in tool_calls(messages[start:])):
            continue
        flags.append(_flag("premature_stop", index, text))
    return flags


def leak(scenario: Scenario, messages: Messages) -> list[Flag]:
    """A value of a kind (or written in) ``unknown_info``, stated before the agent said it."""
    withheld_kinds = unknown_kinds(scenario)
    withheld_values = values_in(unknown_text(scenario))
    known = values_in(scenario_text(scenario, with_unknown=False), strict=False) - withheld_values
    if not withheld_kinds and not withheld_values:
        return []
    flags = []
    for index in _customer_turns(messages):
        said = _agent_said(messages, index)
        stated = values_in(_text(messages[index])) - said - known
        leaked = sorted(v for v in stated if v in withheld_values or v[0] in withheld_kinds)
        if leaked:
            shown = ", ".join(f"{kind} {value}" for kind, value in leaked)
            flags.append(_flag("leak", index, f"{shown}: {_text(messages[index])}"))
    return flags


def invention(scenario: Scenario, messages: Messages) -> list[Flag]:
    """A user, reservation or payment id in neither the scenario nor the agent's words so far.

    Ids of a kind ``unknown_info`` withholds are left to :func:`leak`.
    """
    known = values_in(scenario_text(scenario), strict=False)
    withheld = unknown_kinds(scenario)
    flags = []
    for index in _customer_turns(messages):
        said = _agent_said(messages, index)
        stated = values_in(_text(messages[index])) - said - known
        made_up = sorted(v for v in stated if v[0] in IDENTIFIER_KINDS and v[0] not in withheld)
        if made_up:
            shown = ", ".join(f"{kind} {value}" for kind, value in made_up)
            flags.append(_flag("invention", index, f"{shown}: {_text(messages[index])}"))
    return flags


def role_break(scenario: Scenario, messages: Messages) -> list[Flag]:
    """Tool calls or tool-call syntax, the agent's greeting, or the agent's part in its mouth."""
    flags = []
    for index in _customer_turns(messages):
        message = messages[index]
        text = _text(message)
        if message.get("tool_calls"):
            names = ", ".join(c.name for c in tool_calls([message]))
            flags.append(_flag("role_break", index, f"tool call {names}: {text}"))
        elif _TOOL_SYNTAX.search(text) or _AGENT_PHRASES.search(text):
            flags.append(_flag("role_break", index, text))
    return flags


def empty_or_repeated(scenario: Scenario, messages: Messages) -> list[Flag]:
    """An empty customer turn; a turn of :data:`REPEAT_WORDS` words or more that says again,
    word for word, what the customer's previous turn said, whatever the agent said between (a
    simulator that has lost the thread; the same push-back on another refusal is not flagged);
    or the third customer turn in a row with the same short text ("No." thrice)."""
    flags = []
    previous: list[str] = []
    last_said = ""
    for index in _customer_turns(messages):
        message = messages[index]
        text = " ".join(_text(message).split())
        said = _without_endings(text).lower()
        if not text and not message.get("tool_calls"):
            flags.append(_flag("empty_or_repeated", index, "(empty)"))
        elif len(said.split()) >= REPEAT_WORDS and said == last_said:
            flags.append(_flag("empty_or_repeated", index, f"(said again) {text}"))
        elif len(previous) >= 2 and previous[-1] == previous[-2] == text.lower():
            flags.append(_flag("empty_or_repeated", index, f"(third time) {text}"))
        previous.append(text.lower())
        last_said = said
    return flags


def _gives_transfer_reason(text: str) -> bool:
    """A mention of a transfer (or a human agent) not denied just before ("do not ask to be
    transferred", "I am unable to transfer you")."""
    for match in _TRANSFER_REASON.finditer(text):
        before = re.split(r"[.!?\n]|\\n", text[max(0, match.start() - 40) : match.start()])[-1]
        if not _NEGATION.search(before):
            return True
    return False


def unwarranted_transfer(scenario: Scenario, messages: Messages) -> list[Flag]:
    """``###TRANSFER###``/``###OUT-OF-SCOPE###`` though nobody transferred or said why.

    Warranted: the agent called ``transfer_to_human_agents`` or spoke of a transfer (or a
    human agent) before, or the scenario mentions one other than to forbid it ("Do not ask to
    be transferred" gives no reason).
    """
    if _gives_transfer_reason(scenario_text(scenario)):
        return []
    flags = []
    for index in _customer_turns(messages):
        text = _text(messages[index])
        if TRANSFER not in text and OUT_OF_SCOPE not in text:
            continue
        before = messages[:index]
        transferred = any(c.name == "transfer_to_human_agents" for c in tool_calls(before))
        told = any(
            m.get("role") == "assistant" and _gives_transfer_reason(_text(m)) for m in before
        )
        if not (transferred or told):
            flags.append(_flag("unwarranted_transfer", index, text))
    return flags


Rule = Callable[[Scenario, Messages], list[Flag]]
RULES: dict[str, Rule] = {
    "premature_stop": premature_stop,
    "leak": leak,
    "invention": invention,
    "role_break": role_break,
    "empty_or_repeated": empty_or_repeated,
    "unwarranted_transfer": unwarranted_transfer,
}
AUDIT_KINDS: tuple[str, ...] = tuple(RULES)


def audit_conversation(scenario: Scenario | None, messages: Messages) -> list[Flag]:
    """Every flag of every rule, in message order (then in :data:`AUDIT_KINDS` order)."""
    scenario = scenario if isinstance(scenario, Mapping) else {}
    flags = [flag for rule in RULES.values() for flag in rule(scenario, messages)]
    order = {kind: i for i, kind in enumerate(AUDIT_KINDS)}
    return sorted(flags, key=lambda f: (f["message_index"], order[f["kind"]]))


def count_kinds(flags: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Flags per kind, every kind listed (zeros included)."""
    counts = dict.fromkeys(AUDIT_KINDS, 0)
    for flag in flags:
        counts[str(flag.get("kind"))] = counts.get(str(flag.get("kind")), 0) + 1
    return counts
