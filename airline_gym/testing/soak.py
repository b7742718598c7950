"""A seeded soak run: random agents, well-formed and malformed, against many live envs at once.

:func:`run_soak` drives several :class:`~airline_gym.env.AirlineEnv` instances (scripted
customer, no LLM) round-robin with :class:`ActionGenerator` and checks, at every step and at the
end of every episode:

* no exception escapes ``reset``/``step``, every observation is in the observation space, the
  reward is 0 before the end and the official grade (0 or 1) at the end;
* isolation and determinism: envs run in pairs on the same task, interleaved step by step, and
  each finished episode is replayed call by call on a fresh DB view; every tool result and the
  final DB must come out the same;
* money and seats: balances and seat counts that went below zero are collected (with the
  episode's well-typed tool calls) so that they can be replayed on the reference
  (:class:`ReferenceReplayer`), which must reach the same values.

The generator is biased toward ids that exist (users, their reservations and payment methods,
flights on bookable dates) and often pays the exact price, so write tools succeed often; the rest
is wrong on purpose (bad types, missing or extra arguments, unknown tools, broken JSON, things
that are not messages at all). Everything is a function of the seed.

Example::

    stats = run_soak(steps=100_000, seed=0)
    print(stats.summary())
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from airline_gym.domain.database import (
    TABLES,
    AirlineDB,
    PristineDB,
    canonical_json,
    load_pristine,
    same_db,
)
from airline_gym.domain.toolbox import execute
from airline_gym.domain.tools import WRITE_TOOLS
from airline_gym.env.actions import DONE_TOOL
from airline_gym.errors import AirlineGymError
from airline_gym.testing.soak_actions import ActionGenerator
from airline_gym.testing.soak_reference import ReferenceReplayer

__all__ = [
    "ActionGenerator",
    "Negative",
    "ReferenceReplayer",
    "SoakFailure",
    "SoakStats",
    "full_pristine_hash",
    "negatives_in",
    "run_soak",
    "well_typed_calls",
]


class SoakFailure(AirlineGymError, AssertionError):
    """A soak check failed; the message says which, with the seed, task and episode."""


@dataclass(frozen=True)
class Negative:
    """A value below zero in an episode's final DB (seat count, gift card or certificate)."""

    table: str
    key: str
    path: tuple[str, ...]
    value: float
    task_id: str
    calls: tuple[tuple[str, Any], ...]  # the episode's well-typed tool calls, in order

    @property
    def where(self) -> str:
        """``table[key].a.b`` for reports."""
        return f"{self.table}[{self.key}]." + ".".join(self.path)


@dataclass
class SoakStats:
    """What a soak run did."""

    seed: int
    steps: int = 0
    episodes: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    invalid_actions: int = 0
    writes_ok: Counter[str] = field(default_factory=Counter)
    terminations: Counter[str] = field(default_factory=Counter)
    rewards: Counter[float] = field(default_factory=Counter)
    negatives: list[Negative] = field(default_factory=list)
    negative_count: int = 0
    elapsed_s: float = 0.0
    digest: str = ""

    @property
    def steps_per_s(self) -> float:
        """Env steps per second of wall time."""
        return self.steps / self.elapsed_s if self.elapsed_s else 0.0

    def summary(self) -> str:
        """A few readable lines."""
        writes = ", ".join(f"{k} {v}" for k, v in sorted(self.writes_ok.items()))
        ends = ", ".join(f"{k} {v}" for k, v in self.terminations.most_common())
        kinds = Counter(n.where.split(".", 1)[1].split(".")[0] for n in self.negatives)
        return "\n".join(
            [
                f"seed {self.seed}: {self.steps:,} steps, {self.episodes:,} episodes in "
                f"{self.elapsed_s:.1f} s ({self.steps_per_s:,.0f} steps/s)",
                f"tool calls {self.tool_calls:,} ({self.tool_errors:,} errors), invalid actions "
                f"{self.invalid_actions:,}, rewards {dict(self.rewards)}",
                f"successful writes: {writes}",
                f"terminations: {ends}",
                f"values below zero: {self.negative_count} (kinds among the first "
                f"{len(self.negatives)} kept: {dict(kinds)})",
            ]
        )


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except (ValueError, RecursionError):
        return None


def well_typed_calls(messages: Iterable[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The write-tool calls of a transcript that reached the tool (passed argument checking).

    These are the calls whose DB effect must equal the reference's (read and generic tools
    change nothing; the reference's ``calculate`` may not even return, e.g. on ``9**9**9``).
    """
    results = {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}
    calls = []
    for m in messages:
        for call in m.get("tool_calls") or ():
            name = call["function"]["name"]
            content = results.get(call["id"], "")
            if name not in WRITE_TOOLS or content.startswith("Error: invalid arguments"):
                continue
            calls.append((name, _parsed(call["function"]["arguments"])))
    return calls


def _transcript_calls(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(name, raw arguments, recorded content) of every tool call, in order."""
    calls: list[tuple[str, str, str]] = []
    pending: dict[str, list[tuple[str, str]]] = {}
    for m in messages:
        if m["role"] == "assistant":
            for call in m.get("tool_calls") or ():
                fn = call["function"]
                pending.setdefault(call["id"], []).append((fn["name"], fn["arguments"]))
        elif m["role"] == "tool":
            name, arguments = pending[m["tool_call_id"]].pop(0)
            calls.append((name, arguments, m["content"]))
    return calls


def replay_matches(base: PristineDB, db: AirlineDB, messages: list[dict[str, Any]]) -> str | None:
    """Replay every tool call of ``messages`` on a fresh view; a problem, or None if identical."""
    fresh = base.fork()
    for i, (name, arguments, recorded) in enumerate(_transcript_calls(messages)):
        if name == DONE_TOOL:
            continue
        replayed = execute(fresh, name, arguments).content
        if replayed != recorded:
            return f"call #{i} {name}: replayed {replayed[:200]!r} != recorded {recorded[:200]!r}"
    if not same_db(fresh, db):
        return "the final DB differs from a replay of the episode's own calls on a fresh view"
    return None


def negatives_in(db: AirlineDB) -> list[tuple[str, str, tuple[str, ...], float]]:
    """(table, key, path, value) of seat counts and stored balances below zero."""
    found: list[tuple[str, str, tuple[str, ...], float]] = []
    for key in db.touched("users"):
        user = db.user(key)
        assert user is not None
        for pid, method in user["payment_methods"].items():
            amount = method.get("amount")
            if isinstance(amount, (int, float)) and amount < 0:
                found.append(("users", key, ("payment_methods", pid, "amount"), float(amount)))
    for key in db.touched("flights"):
        flight = db.flight(key)
        assert flight is not None
        for date, status in flight["dates"].items():
            for cabin, seats in (status.get("available_seats") or {}).items():
                if seats < 0:
                    path = ("dates", date, "available_seats", cabin)
                    found.append(("flights", key, path, float(seats)))
    return found


def full_pristine_hash(base: PristineDB) -> str:
    """The reference DB hash of the pristine records, serialised afresh (no cached fragments)."""
    whole = {name: base.table(name) for name in TABLES}
    return hashlib.sha256(canonical_json(whole).encode()).hexdigest()


def run_soak(
    steps: int = 100_000,
    seed: int = 0,
    pairs: int = 2,
    max_negatives: int = 200,
    replay: bool = True,
    time_limit_s: float | None = None,
    progress: Callable[[SoakStats], None] | None = None,
) -> SoakStats:
    """Run ``steps`` env steps over all tasks with ``pairs`` pairs of interleaved envs.

    The two envs of a pair play the same task at the same time, step by step; a pair moves on
    to its next task (cycling through all tasks) when both have finished. Raises
    :class:`SoakFailure` on the first failed check.
    """
    from airline_gym.env.airline_env import AirlineEnv

    base = load_pristine()
    envs = [AirlineEnv(user="scripted") for _ in range(2 * pairs)]
    task_ids = [t.id for t in envs[0].task_set]
    generators = [ActionGenerator(base, seed * 1_000 + i) for i in range(len(envs))]
    stats = SoakStats(seed=seed)
    digest = hashlib.sha256()
    episode_index = [0] * len(envs)
    live = [False] * len(envs)
    started = time.perf_counter()
    cursor = [p * len(task_ids) // max(pairs, 1) for p in range(pairs)]

    def fail(i: int, what: str) -> SoakFailure:
        env = envs[i]
        task = env.episode.task.id if env.episode is not None else "?"
        return SoakFailure(
            f"soak seed {seed}, env {i}, task {task}, episode {episode_index[i]}, "
            f"step {stats.steps}: {what}"
        )

    def start(i: int, task_id: str) -> None:
        env = envs[i]
        try:
            obs, _info = env.reset(
                seed=seed * 7919 + i * 104_729 + stats.episodes, options={"task": task_id}
            )
        except Exception as exc:
            raise fail(i, f"reset raised {type(exc).__name__}: {exc}") from exc
        if not env.observation_space.contains(obs):
            raise fail(i, f"reset observation not in the space: {obs!r:.300}")
        digest.update(canonical_json(obs).encode())
        live[i] = True

    def finish(i: int, reward: float, info: dict[str, Any]) -> None:
        env = envs[i]
        episode = env.episode
        assert episode is not None
        live[i] = False
        stats.episodes += 1
        episode_index[i] += 1
        stats.terminations[episode.termination_reason or "?"] += 1
        stats.rewards[reward] += 1
        grade = info.get("reward_info", {})
        if reward not in (0.0, 1.0) or grade.get("reward") != reward:
            raise fail(i, f"terminal reward {reward!r} vs reward_info {grade.get('reward')!r}")
        messages = episode.transcript()
        for name, _arguments, content in _transcript_calls(messages):
            if name in WRITE_TOOLS and not content.startswith("Error"):
                stats.writes_ok[name] += 1
        if replay:
            problem = replay_matches(base, episode.db, messages)
            if problem:
                raise fail(i, problem)
        found = negatives_in(episode.db)
        if found:
            stats.negative_count += len(found)
            if len(stats.negatives) < max_negatives:
                calls = tuple(well_typed_calls(messages))
                for table, key, path, value in found:
                    stats.negatives.append(
                        Negative(table, key, path, value, episode.task.id, calls)
                    )
        digest.update(canonical_json(messages).encode())  # the whole transcript
        digest.update(f"|{reward}|{episode.termination_reason}|".encode())

    while stats.steps < steps:
        if time_limit_s is not None and time.perf_counter() - started > time_limit_s:
            break
        for p in range(pairs):
            a, b = 2 * p, 2 * p + 1
            if not live[a] and not live[b]:
                task_id = task_ids[cursor[p] % len(task_ids)]
                cursor[p] += 1
                start(a, task_id)
                start(b, task_id)
            for i in (a, b):
                if not live[i]:
                    continue
                env = envs[i]
                assert env.episode is not None
                if env.episode.done:  # ended at reset (cannot happen with the scripted user)
                    finish(i, 0.0, {"reward_info": {"reward": 0.0}})
                    continue
                action = generators[i].act(env.episode.db)
                try:
                    obs, reward, terminated, truncated, info = env.step(action)
                except Exception as exc:
                    what = f"step raised {type(exc).__name__}: {exc} on {action!r:.300}"
                    raise fail(i, what) from exc
                stats.steps += 1
                if not env.observation_space.contains(obs):
                    raise fail(i, f"observation not in the space: {obs!r:.300}")
                for m in obs:
                    if m["role"] == "tool":
                        stats.tool_calls += 1
                        stats.tool_errors += m["content"].startswith("Error")
                    elif m["role"] == "system":
                        stats.invalid_actions += 1
                digest.update(canonical_json(obs).encode())
                if terminated or truncated:
                    finish(i, reward, info)
                elif reward != 0.0:
                    raise fail(i, f"non-terminal reward {reward!r}")
        if progress is not None and stats.steps % 10_000 < 2 * pairs:
            progress(stats)
    stats.elapsed_s = time.perf_counter() - started
    stats.digest = digest.hexdigest()
    return stats
