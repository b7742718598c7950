"""Candidate actions for :class:`~airline_gym.wrappers.CandidateActionWrapper`.

:class:`Knowledge` accumulates what the agent has observed (ids in the customer's messages,
records in tool results, its own actions); :func:`generate_candidates` turns it into concrete
assistant messages in a deterministic order (see the wrapper's docstring for the list).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from airline_gym.domain.policy import CABINS, free_bags
from airline_gym.env.actions import DONE_TOOL
from airline_gym.users.scripted import RESERVATION_ID_RE, USER_ID_RE

__all__ = ["KINDS", "Candidate", "Knowledge", "generate_candidates"]

MAX_EXTRA_BAGS = 3

ASK_TEXT = (
    "Could you please provide your user id, your reservation id, and which payment method "
    "you would like to use?"
)
CONFIRM_TEXT = "I have the details ready. Shall I go ahead with these changes? (yes/no)"
TRANSFER_SUMMARY = "The customer needs help that the available tools cannot provide."

#: Candidate kinds, in the order of the per-slot one-hot.
KINDS = (
    "done",
    "ask",
    "confirm",
    "transfer",
    "get_user_details",
    "get_reservation_details",
    "get_flight_status",
    "update_cabin",
    "update_passengers",
    "update_baggages",
    "cancel_reservation",
)

_CABIN_RE = {
    "basic_economy": re.compile(r"basic[ _-]?economy"),
    "economy": re.compile(r"(?<!basic )(?<!basic_)(?<!basic-)economy"),
    "business": re.compile(r"business"),
}
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_SOURCES = {"gift_card": "gift card", "credit_card": "credit card", "certificate": "certificate"}


@dataclass(frozen=True)
class Candidate:
    """One concrete action the wrapper can send: a tool call, or a text message to the customer.

    ``mentioned``/``pays_preferred``: the customer mentioned the main argument / the payment
    method's kind (features for the policy, not part of the action).
    """

    kind: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    mentioned: bool = False
    pays_preferred: bool = False

    @cached_property
    def key(self) -> str:
        """Identity of the action (name + canonical arguments, or the text)."""
        if self.text is not None:
            return f"message:{self.text}"
        return f"{self.name}:{json.dumps(self.arguments, sort_keys=True)}"

    def to_action(self, call_id: str) -> dict[str, Any]:
        """The OpenAI-format assistant message for the env."""
        if self.text is not None:
            return {"role": "assistant", "content": self.text}
        function = {"name": self.name, "arguments": json.dumps(self.arguments)}
        call = {"id": call_id, "type": "function", "function": function}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def __str__(self) -> str:
        if self.text is not None:
            return f"say({self.text!r})"
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.name}({args})"


@dataclass
class Knowledge:
    """What the agent has observed so far: ids, records, its own actions and their outcomes."""

    user_ids: list[str] = field(default_factory=list)
    reservation_ids: list[str] = field(default_factory=list)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    reservations: dict[str, dict[str, Any]] = field(default_factory=dict)
    focus: str | None = None
    customer: str = ""
    customer_turns: int = 0
    taken: Counter[str] = field(default_factory=Counter)
    tool_counts: Counter[str] = field(default_factory=Counter)
    writes_ok: int = 0
    last_error: bool = False
    last_result: str = ""  # "user", "reservation", "other" or ""
    last_role: str = ""

    def observe(self, messages: Iterable[dict[str, Any]]) -> None:
        """Read the env's observation (new customer turns and tool results)."""
        for message in messages:
            role, content = message.get("role"), message.get("content")
            if not isinstance(content, str):
                continue
            self.last_role = str(role)
            if role == "user":
                self.customer_turns += 1
                self.customer += "\n" + content.lower()
                for user_id in USER_ID_RE.findall(content):
                    _add(self.user_ids, user_id)
                for reservation_id in RESERVATION_ID_RE.findall(content):
                    _add(self.reservation_ids, reservation_id)
            elif role == "tool":
                self._observe_tool(content)
            elif role == "system":  # the env could not read the action
                self.last_error = True

    def _observe_tool(self, content: str) -> None:
        self.last_error = content.startswith("Error")
        self.last_result = "other"
        if self.last_error:
            return
        try:
            data = json.loads(content)
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        if "payment_methods" in data and isinstance(data.get("user_id"), str):
            self.last_result = "user"
            self.users[data["user_id"]] = data
            _add(self.user_ids, data["user_id"])
            for reservation_id in data.get("reservations") or ():
                _add(self.reservation_ids, str(reservation_id))
        elif isinstance(data.get("reservation_id"), str) and "flights" in data:
            self.last_result = "reservation"
            reservation_id = data["reservation_id"]
            self.reservations[reservation_id] = data
            self.focus = reservation_id
            _add(self.reservation_ids, reservation_id)
            if isinstance(data.get("user_id"), str):
                _add(self.user_ids, data["user_id"])

    def record(self, candidate: Candidate, observation: list[dict[str, Any]]) -> None:
        """Note a taken candidate and read what came back."""
        self.taken[candidate.key] += 1
        if candidate.text is None:
            self.tool_counts[candidate.name] += 1
        self.last_result = ""
        self.last_error = False
        self.observe(observation)
        if candidate.kind.startswith(("update_", "cancel_")) and not self.last_error:
            self.writes_ok += 1

    def mentions(self, pattern: str | re.Pattern[str]) -> bool:
        """Whether the customer's messages match ``pattern`` (lower-case text)."""
        if isinstance(pattern, str):
            return pattern.lower() in self.customer
        return bool(pattern.search(self.customer))


def _add(items: list[str], value: str) -> None:
    if value not in items:
        items.append(value)


def _said_payment(k: Knowledge, user: dict[str, Any], payment_id: str) -> bool:
    """Whether the customer named this payment method or its kind ("gift card", ...)."""
    source = (user.get("payment_methods") or {}).get(payment_id, {}).get("source")
    return k.mentions(payment_id) or (source in _SOURCES and k.mentions(_SOURCES[source]))


def _payments(k: Knowledge, user: dict[str, Any], reservation: dict[str, Any]) -> list[str]:
    """Payment methods offered for paid writes, in profile order: those the customer named (by
    id or kind); else the one that paid for the reservation; else every one on file.
    Certificates are left out (the update tools refuse them)."""
    methods = user.get("payment_methods") or {}
    usable = [pid for pid, m in methods.items() if m.get("source") != "certificate"]
    said = [pid for pid in usable if _said_payment(k, user, pid)]
    if said:
        return said
    history = [p.get("payment_id") for p in reservation.get("payment_history") or ()]
    paid = [pid for pid in usable if pid in history[:1]]
    return paid or usable


def _people(user: dict[str, Any]) -> list[dict[str, str]]:
    """The account holder (name and dob from the profile), then their saved passengers."""
    people = []
    name = user.get("name") or {}
    if name.get("first_name") and user.get("dob"):
        people.append(
            {"first_name": name["first_name"], "last_name": name["last_name"], "dob": user["dob"]}
        )
    for person in user.get("saved_passengers") or ():
        entry = {k: person.get(k) for k in ("first_name", "last_name", "dob")}
        if all(isinstance(v, str) for v in entry.values()) and entry not in people:
            people.append(entry)
    return people


def _bags_pattern(count: int) -> re.Pattern[str]:
    word = _NUMBER_WORDS[count] if count < len(_NUMBER_WORDS) else str(count)
    return re.compile(rf"\b(?:{count}|{word})\b[\w ]{{0,20}}\bbag")


def generate_candidates(k: Knowledge) -> list[Candidate]:
    """The candidate actions for the current knowledge, in a deterministic order."""
    out = [
        Candidate("done", DONE_TOOL),
        Candidate("ask", "message", text=ASK_TEXT),
        Candidate("confirm", "message", text=CONFIRM_TEXT),
        Candidate(
            "transfer",
            "transfer_to_human_agents",
            {"summary": TRANSFER_SUMMARY},
            mentioned=k.mentions("human"),
        ),
    ]
    for user_id in k.user_ids:
        out.append(
            Candidate(
                "get_user_details",
                "get_user_details",
                {"user_id": user_id},
                mentioned=k.mentions(user_id),
            )
        )
    for reservation_id in k.reservation_ids:
        out.append(
            Candidate(
                "get_reservation_details",
                "get_reservation_details",
                {"reservation_id": reservation_id},
                mentioned=k.mentions(reservation_id),
            )
        )
    reservation = k.reservations.get(k.focus or "")
    if reservation is None:
        return out
    flights = [
        {"flight_number": f["flight_number"], "date": f["date"]}
        for f in reservation.get("flights") or ()
    ]
    for flight in flights:
        out.append(
            Candidate(
                "get_flight_status",
                "get_flight_status",
                dict(flight),
                mentioned=k.mentions(flight["flight_number"]),
            )
        )
    if reservation.get("status") == "cancelled":
        return out
    out.extend(_writes(k, reservation, flights))
    return out


def _writes(
    k: Knowledge, reservation: dict[str, Any], flights: list[dict[str, str]]
) -> list[Candidate]:
    """Write candidates on the focus reservation."""
    rid = reservation["reservation_id"]
    user = k.users.get(str(reservation.get("user_id")))
    payments = _payments(k, user, reservation) if user else []
    preferred = {pid: _said_payment(k, user, pid) for pid in payments} if user else {}
    out: list[Candidate] = []
    cabin = str(reservation.get("cabin"))
    for new_cabin in CABINS:
        if new_cabin == cabin:
            continue
        for pid in payments:
            out.append(
                Candidate(
                    "update_cabin",
                    "update_reservation_flights",
                    {
                        "reservation_id": rid,
                        "cabin": new_cabin,
                        "flights": flights,
                        "payment_id": pid,
                    },
                    mentioned=k.mentions(_CABIN_RE[new_cabin]),
                    pays_preferred=preferred[pid],
                )
            )
    passengers = [
        {key: p.get(key) for key in ("first_name", "last_name", "dob")}
        for p in reservation.get("passengers") or ()
    ]
    for person in _people(user) if user else []:
        if person in passengers:
            continue
        said = k.mentions(f"{person['first_name']} {person['last_name']}")
        for slot in range(len(passengers)):
            new = [*passengers[:slot], person, *passengers[slot + 1 :]]
            out.append(
                Candidate(
                    "update_passengers",
                    "update_reservation_passengers",
                    {"reservation_id": rid, "passengers": new},
                    mentioned=said,
                )
            )
    if user:
        total = int(reservation.get("total_baggages") or 0)
        paid = int(reservation.get("nonfree_baggages") or 0)
        free = free_bags(str(user.get("membership")), cabin, len(passengers))
        for extra in range(1, MAX_EXTRA_BAGS + 1):
            new_total = total + extra
            said = k.mentions(_bags_pattern(extra)) or k.mentions(_bags_pattern(new_total))
            for pid in payments:
                out.append(
                    Candidate(
                        "update_baggages",
                        "update_reservation_baggages",
                        {
                            "reservation_id": rid,
                            "total_baggages": new_total,
                            "nonfree_baggages": max(paid, new_total - free),
                            "payment_id": pid,
                        },
                        mentioned=said,
                        pays_preferred=preferred[pid],
                    )
                )
    out.append(
        Candidate(
            "cancel_reservation",
            "cancel_reservation",
            {"reservation_id": rid},
            mentioned=k.mentions("cancel"),
        )
    )
    return out
