"""A scripted customer's reply costs the same at any turn (issue 35, items 15-16): it reads only
the messages added since its last reply, never the whole history again. Work is counted (messages
read), not timed: replaying the dialogue at every reply reads about N**2/2 messages over N turns,
reading only the new ones about 2N."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex

import pytest

from airline_gym.domain.database import load_pristine
from airline_gym.domain.prompts import GREETING
from airline_gym.domain.tasks import load_task_set
from airline_gym.users import ScriptedUser

TURNS = 1500


class CountingDialogue(list[dict[str, Any]]):
    """A dialogue that counts the messages read out of it."""

    reads = 0

    def __getitem__(self, index: SupportsIndex | slice) -> Any:  # type: ignore[override]
        item = super().__getitem__(index)
        type(self).reads += len(item) if isinstance(index, slice) else 1
        return item

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for item in super().__iter__():
            type(self).reads += 1
            yield item


def _play(user: ScriptedUser, turns: int, text: str) -> int:
    CountingDialogue.reads = 0
    dialogue = CountingDialogue([{"role": "assistant", "content": GREETING}])
    dialogue.append({"role": "user", "content": user.reply(dialogue)})
    for turn in range(turns):
        dialogue.append({"role": "assistant", "content": f"{text} ({turn})"})
        dialogue.append({"role": "user", "content": user.reply(dialogue)})
    return CountingDialogue.reads


@pytest.mark.parametrize("intents", [True, False], ids=["intent", "keyword"])
def test_messages_read_grow_linearly_with_the_turns(intents: bool) -> None:
    user = ScriptedUser(max_turns=100_000, benchmark="tau2", intents=intents)
    user.reset(load_task_set("tau2")["6"])  # task 6 has an intent: add insurance, refused
    user.attach_db(load_pristine().fork())
    assert (user.player is not None) == intents
    reads = _play(user, TURNS, "Let me look into that for you")
    assert reads <= 8 * TURNS, reads  # the replaying customer read over a million


def test_a_dialogue_that_is_not_a_continuation_is_replayed_from_its_start() -> None:
    user = ScriptedUser(benchmark="tau2")
    user.reset(load_task_set("tau2")["6"])
    user.attach_db(load_pristine().fork())
    talk = [{"role": "assistant", "content": GREETING}]
    opening = user.reply(talk)
    talk += [
        {"role": "user", "content": opening},
        {"role": "assistant", "content": "Sorry, that is not possible."},
    ]
    first = user.reply(talk)
    assert user.reply(talk) == first  # asked again: the same answer, nothing read twice
    edited = [dict(m) for m in talk]
    edited[-1]["content"] = "Hmm."
    assert user.reply(edited) != first  # another dialogue: read from its start
    assert user.reply([dict(m) for m in talk]) == first
