"""info["messages"]/info["tools"]: handed out without copying, private once read (issue 17.17-18).

A step used to deep-copy the whole history into ``info["messages"]`` (step 800 cost 40x step 10)
and every env and reset unpickled its own tools. Now each list is built from shared items in
one pointer copy, and every way of reading an item through Python gives a private copy.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from airline_gym.agents import tool_call_message
from airline_gym.env import AirlineEnv
from airline_gym.env.copy_on_read import CopyOnRead, Shared
from airline_gym.testing.bench_common import retained_per_item

READ = tool_call_message("get_reservation_details", {"reservation_id": "FQ8APE"}, "r")


def shared_view() -> tuple[CopyOnRead, Shared]:
    item = Shared(role="assistant", content=None, tool_calls=[{"id": "a", "function": {}}])
    return CopyOnRead.of((Shared(role="user", content="hi"), item)), item


def mutate_all(messages: Any) -> None:
    for message in messages:
        message["content"] = "edited"
        for call in message.get("tool_calls") or ():
            call["id"] = "edited"


READS = {
    "iteration": lambda v: list(iter(v)),
    "index": lambda v: [v[0], v[1]],
    "negative index": lambda v: [v[-2], v[-1]],
    "slice": lambda v: v[:],
    "reversed": lambda v: list(reversed(v)),
    "copy": lambda v: v.copy(),
    "pop": lambda v: [v.pop(0), v.pop()],
    "plus": lambda v: v + [],  # noqa: RUF005 (the operator is what is tested)
    "reflected plus": lambda v: [] + v,  # noqa: RUF005
    "times": lambda v: v * 1,
    "copy.copy": copy.copy,
    "copy.deepcopy": copy.deepcopy,
    "pickle": lambda v: pickle.loads(pickle.dumps(v)),
    "unpacking": lambda v: [*v],
}


@pytest.mark.parametrize("how", sorted(READS))
def test_every_way_of_reading_gives_private_copies(how: str) -> None:
    view, shared = shared_view()
    twin = CopyOnRead.of(list.copy(view))  # another step's list over the same items
    mutate_all(READS[how](view))
    assert shared == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "a", "function": {}}],
    }
    assert [m["content"] for m in twin] == ["hi", None]
    assert twin[1]["tool_calls"][0]["id"] == "a"


def test_sort_keys_see_copies_and_items_stay_private() -> None:
    view, shared = shared_view()

    def key(message: dict[str, Any]) -> str:
        message["content"] = "edited by the key"
        return message["role"]

    view.sort(key=key)
    assert shared["content"] is None
    assert [m["role"] for m in view] == ["assistant", "user"]


def test_readers_that_do_not_touch_items_see_the_real_content() -> None:
    view, _ = shared_view()
    assert json.loads(json.dumps(view)) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {}}]},
    ]
    assert len(view) == 2 and view == [dict(m) for m in list.copy(view)]
    assert type(pickle.loads(pickle.dumps(view))) is list  # a plain list once it leaves


def test_a_read_item_stays_the_same_private_copy() -> None:
    view, _ = shared_view()
    view[1]["content"] = "mine"
    assert view[1]["content"] == "mine" and next(reversed(view))["content"] == "mine"


def test_steps_share_unread_history_and_never_the_envs_own_messages() -> None:
    env = AirlineEnv(task=17, user="scripted", max_steps=10_000)
    _, first = env.reset(seed=0)
    for _ in range(5):
        *_, second = env.step(READ)
    assert env.episode is not None
    # no message was copied for the new info: the unread items are the very same objects
    raw_first, raw_second = list.copy(first["messages"]), list.copy(second["messages"])
    assert all(a is b for a, b in zip(raw_first, raw_second, strict=False))
    internal = {id(m) for m in env.episode.messages}
    assert not internal & {id(m) for m in raw_second}
    # and whatever is read from one step's info is private to it
    mutate_all(second["messages"])
    *_, third = env.step(READ)
    assert [m["content"] for m in third["messages"]][:2] == [
        env.system_prompt,
        "Hi! How can I help you today?",
    ]


def test_tools_are_one_copy_per_process_and_private_per_read() -> None:
    a, b = AirlineEnv(task=17, user="scripted"), AirlineEnv(task=17, user="scripted")
    _, info_a = a.reset(seed=0)
    _, info_b = b.reset(seed=0)
    assert all(
        x is y for x, y in zip(list.copy(info_a["tools"]), list.copy(info_b["tools"]), strict=True)
    )
    info_a["tools"][0]["function"]["name"] = "renamed"
    a.tools[1]["function"]["name"] = "renamed too"
    assert info_b["tools"][0]["function"]["name"] == "book_reservation"
    assert b.tools[1]["function"]["name"] == a.action_space.tools[1]["function"]["name"]
    assert a.action_space.tools[1]["function"]["name"] != "renamed too"


def test_a_live_env_mid_episode_holds_at_most_16_kib() -> None:
    AirlineEnv(task=17, user="scripted").reset(seed=0)  # data, tools and prompts cached

    def live(i: int) -> AirlineEnv:
        env = AirlineEnv(task=17, user="scripted")
        env.reset(seed=i)
        env.step(READ)
        return env

    assert retained_per_item(live, 100) <= 16 * 1024
