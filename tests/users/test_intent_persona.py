"""Personas (their shares: tests/taskgen/test_traits.py): the offline customer words
each style differently (a several-at-once customer names every request in its first turn)
without deciding differently; the gold dialogue and the observation-only policy agent score 1.0
on tasks of every style; the LLM customer's instructions state the persona."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from airline_gym.agents.dialogue_gold import DialogueGoldAgent
from airline_gym.agents.policy.reading import read_requests
from airline_gym.agents.policy.roster import make_agent
from airline_gym.domain.decisions import Solution
from airline_gym.domain.intents import PERSONA_STYLES, Intent, Persona
from airline_gym.domain.said import is_yes, left_unsatisfied
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.harness.runner import run_episode
from airline_gym.taskgen.generate import generate
from airline_gym.taskgen.instructions import write_instructions
from airline_gym.taskgen.output import write_tasks
from airline_gym.users.intent_persona import Voice
from airline_gym.users.intent_user import IntentPlayer
from airline_gym.users.intent_words import say_request
from tests.users.intent_tasks import BAGS_THEN_CANCEL

pytestmark = pytest.mark.usefixtures("tau3_for_module")

PER_STYLE = 5  # tasks of each style played by each agent


def _style(record: dict[str, Any]) -> str:
    styles = Intent.from_json(record["airline_gym"]["intent"]).persona.styles
    return styles[0] if styles else "plain"


@pytest.fixture(scope="module")
def by_style(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]], Any]:
    records = generate(240, 36).records
    path = tmp_path_factory.mktemp("personas") / "tasks.json"
    write_tasks(records, path)
    out: dict[str, list[str]] = {}
    for record in records:  # the several-request tasks first: they show a style best
        out.setdefault(_style(record), []).append(record["id"])
    multi = {r["id"] for r in records if len(r["airline_gym"]["kinds"]) > 1}
    chosen = {s: sorted(ids, key=lambda i: i not in multi)[:PER_STYLE] for s, ids in out.items()}
    return path, chosen, {r["id"]: r for r in records}


@pytest.mark.parametrize("style", PERSONA_STYLES)
@pytest.mark.parametrize("agent", ["gold-dialogue", "policy"])
def test_every_style_is_played_to_the_end(
    by_style: tuple[Path, dict[str, list[str]], Any], style: str, agent: str
) -> None:
    path, ids, records = by_style
    assert len(ids[style]) == PER_STYLE
    env = AirlineEnv(tasks=str(path), user="scripted")
    for task_id in ids[style]:
        player = DialogueGoldAgent(str(path)) if agent == "gold-dialogue" else make_agent("policy")
        result = run_episode(env, player, task_id, seed=0)
        assert result.reward == 1.0, (task_id, result.termination_reason)
        first = next(m["content"] for m in result.messages if m["role"] == "user")
        if style == "several_at_once":  # every request named in the first customer turn
            intent = Intent.from_json(records[task_id]["airline_gym"]["intent"])
            assert len(read_requests(first)) == len(intent.requests) > 1, first


def _opening(persona: Persona) -> str:
    return IntentPlayer(replace(BAGS_THEN_CANCEL, persona=persona)).opening()


def test_each_style_words_the_same_first_turn_differently() -> None:
    styles = {
        "plain": Persona(),
        **{
            s: Persona(**({"patient": False} if s == "impatient" else {s: True}))
            for s in PERSONA_STYLES
        },
    }
    openings = {name: _opening(p) for name, p in styles.items()}
    assert len(set(openings.values())) == len(openings), openings
    asks = [say_request(r, f"my reservation {r.reservation_id}") for r in BAGS_THEN_CANCEL.requests]
    assert all(a in openings["several_at_once"] for a in asks)
    assert asks[1] not in openings["plain"]
    assert "2024-05" in openings["confused"].split("I'd like")[0]  # the date before the id
    for text in openings.values():  # what each reads: the user id, no yes, no leaving
        assert "isabella_muller_2311" in text and not is_yes(text) and not left_unsatisfied(text)


def test_a_style_changes_the_words_never_the_decision() -> None:
    for style in PERSONA_STYLES:
        persona = Persona(**({"patient": False} if style == "impatient" else {style: True}))
        voice = Voice(persona)
        yeses = [voice.yes(n) for n in range(3)]
        assert all(is_yes(y) for y in yeses) and len(set(yeses)) == 3
        for text in (voice.next_request(), voice.nudge(""), voice.push("")):
            assert not is_yes(text) and not left_unsatisfied(text) and not read_requests(text)
            assert "understand" not in text.lower()  # the policy agent reads it as accepting


def test_the_llm_customers_instructions_state_the_persona() -> None:
    def text(persona: Persona) -> str:
        intent = replace(BAGS_THEN_CANCEL, persona=persona)
        return str(write_instructions(intent, Solution(()))["task_instructions"])

    plain = text(Persona())
    assert "one thing at a time" in plain
    assert "tell the agent about everything" in text(Persona(several_at_once=True))
    assert "small talk" in text(Persona(chatty=True))
    assert "date of your trip before" in text(Persona(confused=True))
    assert "short on time" in text(Persona(patient=False))
    assert "as few words" in text(Persona(terse=True))
