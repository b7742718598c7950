"""Every text handler of the scripted customer and the env is linear in its input (11.8).

Before the fix a 40,000-character agent message took ~10 s in the customer's email regex (a
1M-character one, which the env allows, would take hours). The bounds below are on CPU time
(``cpu_clock``), so a loaded machine does not matter, and orders of magnitude below quadratic
behaviour.
"""

from __future__ import annotations

import pytest
from cpu_clock import cpu_clock

from airline_gym.domain.tasks import load_task_set
from airline_gym.env import AirlineEnv
from airline_gym.env.actions import MAX_ACTION_CHARS
from airline_gym.users.scripted import EMAIL_RE, ScriptedUser

M = MAX_ACTION_CHARS  # the longest message the env accepts
SHAPES = {
    "letters": "a",
    "address characters": "a_1.",
    "at signs": "a@b.",
    "spaces": " ",
    "questions": "What? ",
    "list items": "1. x\n",
    "you": "you ",
    "dob": "dob ",
}


def _text(unit: str) -> str:
    return (unit * (M // len(unit) + 1))[:M]


def test_email_regex_on_a_megabyte_run_is_fast() -> None:
    for unit in ("a", "a.", "a-", "1"):
        with cpu_clock() as spent:
            assert EMAIL_RE.search(_text(unit)) is None
        assert spent() < 5  # was hours


@pytest.mark.parametrize("unit", SHAPES.values(), ids=SHAPES)
def test_scripted_reply_to_a_megabyte_message(unit: str) -> None:
    user = ScriptedUser()
    user.reset(load_task_set()["17"])
    dialogue = [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": _text(unit)},
    ]
    with cpu_clock() as spent:
        reply = user.reply(dialogue)
    assert spent() < 20
    assert isinstance(reply, str) and reply


@pytest.mark.parametrize("unit", ["a", "get_user_details(", "(", " "], ids=repr)
def test_env_step_with_a_megabyte_text_action(unit: str) -> None:
    env = AirlineEnv(task=17, user="scripted", render_mode="ansi")
    env.reset(seed=0)
    with cpu_clock() as spent:
        obs, *_ = env.step(_text(unit))
        env.render()
    assert spent() < 30
    assert obs and all(isinstance(m["content"], str) for m in obs)
