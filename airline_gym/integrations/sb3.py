"""A stable-baselines3 bridge: ``Discrete`` actions and ``Box`` observations over ``AirlineEnv``.

SB3 has no text spaces, so :class:`CandidateActionWrapper` turns the chat env into a classic RL
problem::

    import gymnasium as gym
    import airline_gym
    from airline_gym.integrations.sb3 import CandidateActionWrapper

    env = CandidateActionWrapper(gym.make("AirlineScripted-v0", task=17))

**Actions.** Before every step the wrapper rebuilds a *candidate set* of concrete assistant
messages from what the agent has observed so far (ids in the customer's messages, records in
tool results) and the tools' argument shapes, in a deterministic order:

1. fixed: ``done``; a message asking for the user id, reservation id and payment method; a
   "shall I go ahead?" confirmation message; ``transfer_to_human_agents``;
2. reads: ``get_user_details`` for every user id seen, ``get_reservation_details`` for every
   reservation id seen (in the order first seen), ``get_flight_status`` for the flights of the
   focus reservation;
3. writes on the *focus* reservation (the reservation record observed last, unless cancelled):
   change the cabin to each other cabin (same flights); set one passenger to the account holder
   (name and date of birth from the profile) or one of their saved passengers; add 1 to 3
   checked bags, the paid ones computed with the policy's allowance for the owner's membership
   and the current cabin; cancel. Paid writes are offered once per payment method the customer
   named (by id or kind, e.g. "gift card"), else with the method that paid for the
   reservation, else with every non-certificate method on file.

The space is ``Discrete(n)`` (default 40: reading every reservation of each of the 50 tasks'
customers gives at most 34 candidates).
With ``padding="cycle"`` (default) index ``i`` past the candidate count ``k`` sends candidate
``i % k``, so every index acts; with ``padding="noop"`` it does nothing and costs one action of
the wrapper's budget (``max_actions``, default 30, then ``truncated``).
:meth:`CandidateActionWrapper.action_masks` marks the ``k`` distinct slots, for sb3-contrib's
``MaskablePPO``. Plain PPO learns with both, but with "noop" it can settle on the no-op slots,
the one choice that never changes anything (1 of 4 seeds with the example's settings, about half
with others we tried; "cycle": 8 of 8), so "cycle" is the default.

**Observations.** A ``Box(0, 1)`` float32 vector: per slot, whether it holds a distinct
candidate, whether that exact action was already taken, whether its main argument (cabin, bag
count, person, id, ...) and its payment method were mentioned by the customer, and a one-hot of
its kind (:data:`KINDS`; a "cycle" repeat carries its candidate's features); then tool-call
counts, step fraction, error count, whether the last tool call failed, the kind of the last
tool result, the candidate count, and the focus reservation's cabin, passenger and bag counts,
status and owner's membership.

**Limits, plainly.** This is a toy bridge that lets classic RL algorithms run on a text env; it
is not how to build an airline agent. It cannot express arbitrary tool arguments: no bookings,
no moves to other flights, no searches, no certificates, no free-text replies beyond two fixed
messages, one passenger changed per call. Candidate generation is heuristic (regexes over the
customer's text, the last reservation read is the only one that can be modified, the payment
rule above) and covers only the kinds of writes airline tasks commonly need, so many tasks
cannot be solved through it at all. Candidates past ``n`` are cut. A policy learnt on one task
does not transfer to others in any meaningful way.

:class:`ProgressReward` is opt-in training-only shaping (it reads the gold DB).
:func:`train_ppo` and :func:`evaluate` import stable-baselines3 (and so torch) lazily; the
wrappers need only Gymnasium and NumPy.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from airline_gym.agents import text_message, tool_call_message
from airline_gym.domain.tools import TOOLS
from airline_gym.env.actions import DONE_TOOL
from airline_gym.errors import ConfigError
from airline_gym.users.scripted import RESERVATION_ID_RE, USER_ID_RE

if TYPE_CHECKING:
    from stable_baselines3 import PPO
    from stable_baselines3.common.base_class import BaseAlgorithm

__all__ = [
    "KINDS",
    "Candidate",
    "CandidateActionWrapper",
    "Knowledge",
    "ProgressReward",
    "evaluate",
    "generate_candidates",
    "make_env",
    "train_ppo",
]

CABINS = ("basic_economy", "economy", "business")
#: Free checked bags per passenger, by membership, for (basic_economy, economy, business).
FREE_BAGS: dict[str, tuple[int, int, int]] = {
    "regular": (0, 1, 2),
    "silver": (1, 2, 3),
    "gold": (2, 3, 4),
}
MEMBERSHIPS = tuple(FREE_BAGS)
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
_KIND_INDEX = {kind: i for i, kind in enumerate(KINDS)}
_TOOL_NAMES = (*TOOLS, DONE_TOOL)
_SLOT_FEATURES = 4 + len(KINDS)
_GLOBAL_FEATURES = len(_TOOL_NAMES) + 21

_CABIN_RE = {
    "basic_economy": re.compile(r"basic[ _-]?economy"),
    "economy": re.compile(r"(?<!basic )(?<!basic_)(?<!basic-)economy"),
    "business": re.compile(r"business"),
}
#: The env's info keys the wrapper passes on by default.
INFO_KEYS = ("task_id", "step_count", "num_errors", "termination_reason", "error", "reward_info")
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
            return text_message(self.text)
        return tool_call_message(self.name, self.arguments, call_id)

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


def _free_bags(membership: str, cabin: str, passengers: int) -> int:
    allowance = FREE_BAGS.get(membership, FREE_BAGS["regular"])
    return allowance[CABINS.index(cabin) if cabin in CABINS else 0] * passengers


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
        free = _free_bags(str(user.get("membership")), cabin, len(passengers))
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


PADDINGS = ("cycle", "noop")


class CandidateActionWrapper(gym.Wrapper[np.ndarray, np.int64, list[dict[str, Any]], Any]):
    """``Discrete(n)`` candidate actions and a ``Box`` feature observation over ``AirlineEnv``.

    See the module docstring for the candidates, the features, the padding modes and the
    limits. ``info`` keeps only the light keys (:data:`INFO_KEYS`; SB3's ``DummyVecEnv``
    deep-copies every info dict) plus ``action`` (the candidate sent) or ``noop``; pass
    ``full_info=True`` for the env's whole info (transcript, tool schemas, prompt).
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        n: int = 40,
        padding: str = "cycle",
        max_actions: int = 30,
        noop_penalty: float = 0.0,
        full_info: bool = False,
    ) -> None:
        """Wrap ``env`` (an ``AirlineEnv``, possibly inside ``gym.make``'s wrappers).

        Args:
            env: The airline env.
            n: Number of action slots; candidates past ``n`` are dropped.
            padding: What indices past the candidate count do: "cycle" (index ``i`` sends
                candidate ``i % count``) or "noop" (nothing is sent; it costs one action).
            max_actions: Wrapper steps per episode (no-ops included) before truncation.
            noop_penalty: Reward subtracted for a no-op (``padding="noop"``).
            full_info: Pass the env's whole info dict through.
        """
        super().__init__(env)
        if n < 4 or max_actions < 1:
            raise ConfigError("n must be at least 4 and max_actions at least 1")
        if padding not in PADDINGS:
            raise ConfigError(f"padding must be one of {PADDINGS}; got {padding!r}")
        self.n = n
        self.padding = padding
        self.max_actions = max_actions
        self.noop_penalty = noop_penalty
        self.full_info = full_info
        self.action_space = gym.spaces.Discrete(n)
        size = n * _SLOT_FEATURES + _GLOBAL_FEATURES
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)
        self.knowledge = Knowledge()
        self.candidates: list[Candidate] = []
        self._actions = 0
        self._ended: tuple[bool, bool] | None = None
        self._info: dict[str, Any] = {}

    # --- gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the env and the knowledge; the first customer message is read."""
        observation, info = self.env.reset(seed=seed, options=options)
        self.knowledge = Knowledge()
        self.knowledge.observe(observation)
        self._actions = 0
        self._ended = None
        self._info = self._light(info)
        self.candidates = generate_candidates(self.knowledge)[: self.n]
        return self._features(), {**self._info, "num_candidates": len(self.candidates)}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Send the candidate behind index ``action`` (see ``padding``)."""
        index = int(np.asarray(action).reshape(-1)[0])
        if self._ended is not None:  # stepping past the end, as the env: nothing happens
            return self._features(), 0.0, *self._ended, dict(self._info)
        self._actions += 1
        candidate = self.decode(index)
        terminated = truncated = False
        if candidate is None:
            reward = -self.noop_penalty
            info = {**self._info, "noop": True}
        else:
            inner: gym.Env[Any, Any] = self.env
            observation, raw, terminated, truncated, info = inner.step(
                candidate.to_action(f"call_{self._actions}")
            )
            reward = float(raw)
            self.knowledge.record(candidate, observation)
            self._info = self._light(info)
            info = {**self._info, "action": str(candidate)}
        if not (terminated or truncated) and self._actions >= self.max_actions:
            truncated = True
        if terminated or truncated:
            self._ended = (bool(terminated), bool(truncated))
        self.candidates = generate_candidates(self.knowledge)[: self.n]
        info["num_candidates"] = len(self.candidates)
        return self._features(), float(reward) + 0.0, bool(terminated), bool(truncated), info

    # --- helpers ---------------------------------------------------------------------------------
    def decode(self, index: int) -> Candidate | None:
        """The candidate that action ``index`` sends now (None: a no-op)."""
        count = len(self.candidates)
        if not 0 <= index < self.n or count == 0:
            return None
        if index < count:
            return self.candidates[index]
        return self.candidates[index % count] if self.padding == "cycle" else None

    def action_masks(self) -> np.ndarray:
        """The slots holding a distinct candidate (for sb3-contrib's ``MaskablePPO``)."""
        mask = np.zeros(self.n, dtype=bool)
        mask[: len(self.candidates)] = True
        return mask

    def _light(self, info: dict[str, Any]) -> dict[str, Any]:
        if self.full_info:
            return dict(info)
        return {key: info[key] for key in INFO_KEYS if key in info}

    def _features(self) -> np.ndarray:
        k = self.knowledge
        slots = np.zeros((self.n, _SLOT_FEATURES), dtype=np.float32)
        count = len(self.candidates)
        for i, c in enumerate(self.candidates):
            row = slots[i]
            row[0] = 1.0
            row[1] = float(k.taken[c.key] > 0)
            row[2] = float(c.mentioned)
            row[3] = float(c.pays_preferred)
            row[4 + _KIND_INDEX[c.kind]] = 1.0
        if self.padding == "cycle" and 0 < count < self.n:
            for i in range(count, self.n):  # a repeat: same features, not marked distinct
                slots[i, 1:] = slots[i % count, 1:]
        g = np.zeros(_GLOBAL_FEATURES, dtype=np.float32)
        for i, name in enumerate(_TOOL_NAMES):
            g[i] = min(k.tool_counts[name], 3) / 3
        j = len(_TOOL_NAMES)
        max_errors = getattr(self.env.unwrapped, "max_errors", 10)
        episode = getattr(self.env.unwrapped, "episode", None)
        errors = episode.num_errors if episode is not None else 0
        g[j] = self._actions / self.max_actions
        g[j + 1] = min(errors / max_errors, 1.0)
        g[j + 2] = float(k.last_error)
        g[j + 3] = float(k.last_role == "user")
        g[j + 4] = float(k.last_result == "user")
        g[j + 5] = float(k.last_result == "reservation")
        g[j + 6] = float(k.last_result == "other")
        g[j + 7] = min(k.writes_ok, 5) / 5
        g[j + 8] = min(k.customer_turns, 10) / 10
        g[j + 9] = count / self.n
        reservation = k.reservations.get(k.focus or "")
        if reservation is not None:
            g[j + 10] = 1.0
            cabin = reservation.get("cabin")
            if cabin in CABINS:
                g[j + 11 + CABINS.index(cabin)] = 1.0
            g[j + 14] = min(len(reservation.get("passengers") or ()), 9) / 9
            g[j + 15] = min(int(reservation.get("total_baggages") or 0), 9) / 9
            g[j + 16] = float(reservation.get("status") == "cancelled")
            owner = k.users.get(str(reservation.get("user_id")))
            if owner is not None and owner.get("membership") in MEMBERSHIPS:
                g[j + 17 + MEMBERSHIPS.index(owner["membership"])] = 1.0
        g[j + 20] = float(self._ended is not None)
        return np.concatenate([slots.reshape(-1), g])


class ProgressReward(gym.Wrapper[Any, Any, Any, Any]):
    """Opt-in reward shaping for training: pay DB progress when it is made.

    Adds to the env's reward (keep the env on ``reward="official"``) ``scale`` times each
    increase of the best DB credit reached so far in the episode. The DB credit is the partial
    reward's DB term: one minus the share of fields still differing from the gold DB, relative
    to the fields the gold actions change, clipped at 0. A correct write is paid when it is made;
    a harmful one is not charged here (the official reward at the end does that), so exploring
    is never punished. The episode total is the best credit reached. It reads the task's gold
    DB: a training signal only; measure with :func:`evaluate`.
    """

    def __init__(self, env: gym.Env[Any, Any], scale: float = 1.0) -> None:
        """Wrap a :class:`CandidateActionWrapper` (over an ``AirlineEnv``)."""
        super().__init__(env)
        self.scale = scale
        self._best = 0.0
        self._gold_fields: dict[str, int] = {}

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset; the starting credit counts as reached."""
        observation, info = self.env.reset(**kwargs)
        self._best = self.db_credit()
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step, adding ``scale`` times the gain in best DB credit."""
        writes = self.get_wrapper_attr("knowledge").writes_ok
        observation, reward, terminated, truncated, info = self.env.step(action)
        gain = 0.0
        if self.get_wrapper_attr("knowledge").writes_ok != writes:  # only writes change the DB
            best = max(self._best, self.db_credit())
            gain, self._best = best - self._best, best
        return observation, float(reward) + self.scale * gain, terminated, truncated, info

    def db_credit(self) -> float:
        """The DB credit of the episode's current DB, in [0, 1]."""
        from airline_gym.domain.grading import db_diff, gold_db

        episode = self.env.unwrapped.episode  # type: ignore[attr-defined]
        gold = gold_db(episode.task, episode.db.base)
        if episode.task.id not in self._gold_fields:
            self._gold_fields[episode.task.id] = len(db_diff(episode.db.base.fork(), gold))
        gold_fields = max(1, self._gold_fields[episode.task.id])
        return max(0.0, 1.0 - len(db_diff(episode.db, gold)) / gold_fields)


# --- training helpers (stable-baselines3 is imported lazily) -------------------------------------
def make_env(
    task: str | int = 17,
    n: int = 40,
    padding: str = "cycle",
    max_actions: int = 30,
    progress_reward: float = 0.0,
    **env_kwargs: Any,
) -> gym.Env[np.ndarray, np.int64]:
    """``AirlineScripted-v0`` on ``task`` wrapped for SB3, plus :class:`ProgressReward` when
    ``progress_reward`` > 0; ``env_kwargs`` go to ``gym.make``."""
    import airline_gym  # noqa: F401  (registers the env ids)

    env: gym.Env[Any, Any] = CandidateActionWrapper(
        gym.make("AirlineScripted-v0", task=task, **env_kwargs),
        n=n,
        padding=padding,
        max_actions=max_actions,
    )
    if progress_reward > 0:
        env = ProgressReward(env, scale=progress_reward)
    return env


def evaluate(
    policy: BaseAlgorithm | Callable[[np.ndarray], Any],
    env: gym.Env[np.ndarray, np.int64],
    episodes: int = 20,
    deterministic: bool = False,
    seed: int = 0,
) -> list[float]:
    """The official tau2 reward (DB x communicate, in {0, 1}) of ``episodes`` episodes.

    ``policy`` is an SB3 model or a function observation -> action index. The grade is read from
    ``info["reward_info"]``, so shaping options of ``env`` do not leak in; an episode the
    wrapper truncates scores 0. A model with ``deterministic=False`` samples from torch's RNG:
    seed it (``stable_baselines3.common.utils.set_random_seed``) for reproducible numbers.
    """
    rewards = []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed + episode)
        done, info = False, dict[str, Any]()
        while not done:
            if hasattr(policy, "predict"):
                action, _ = policy.predict(observation, deterministic=deterministic)
            else:
                action = policy(observation)
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        rewards.append(float(info.get("reward_info", {}).get("reward", 0.0)))
    return rewards


#: PPO settings measured to learn task 17 in 30k-60k steps on every seed tried (see
#: examples/sb3_ppo.py); the learning rate decays linearly to 0.
PPO_KWARGS: dict[str, Any] = {
    "n_steps": 64,
    "batch_size": 128,
    "n_epochs": 10,
    "ent_coef": 0.01,
    "gamma": 0.99,
}
LEARNING_RATE = 1e-3


def train_ppo(
    task: str | int = 17,
    timesteps: int = 60_000,
    seed: int = 0,
    n_envs: int = 8,
    eval_episodes: int = 20,
    eval_every: int = 5_000,
    deterministic_eval: bool = False,
    padding: str = "cycle",
    log: Callable[[str], None] | None = print,
    **ppo_kwargs: Any,
) -> tuple[PPO, list[tuple[int, float]]]:
    """Train SB3's PPO (``MlpPolicy``) on one task with the scripted customer.

    Training envs add :class:`ProgressReward`; every ``eval_every`` timesteps (and before
    training) the policy is scored with :func:`evaluate` on ``eval_episodes`` episodes of a plain
    env (official reward). Returns the model and that learning curve, ``[(timesteps,
    mean_reward), ...]``; ``log`` gets one line per point. Seeded: same inputs, same numbers.
    """
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.utils import set_random_seed

    set_random_seed(seed)
    venv = make_vec_env(
        lambda: make_env(task, padding=padding, progress_reward=1.0), n_envs=n_envs, seed=seed
    )
    eval_env = make_env(task, padding=padding)
    kwargs = {**PPO_KWARGS, "learning_rate": lambda remaining: LEARNING_RATE * remaining}
    model = PPO("MlpPolicy", venv, seed=seed, verbose=0, **{**kwargs, **ppo_kwargs})
    curve: list[tuple[int, float]] = []

    def point(steps: int) -> None:
        rewards = evaluate(model, eval_env, eval_episodes, deterministic_eval, seed=seed)
        curve.append((steps, float(np.mean(rewards))))
        if log is not None:
            log(f"timesteps={steps:>7d}  mean_reward={curve[-1][1]:.3f}")

    class Curve(BaseCallback):
        def _on_rollout_start(self) -> None:  # after each update: the policy just changed
            if self.num_timesteps >= len(curve) * eval_every:
                point(self.num_timesteps)

        def _on_step(self) -> bool:
            return True

    point(0)
    model.learn(timesteps, callback=Curve())
    point(model.num_timesteps)
    return model, curve
