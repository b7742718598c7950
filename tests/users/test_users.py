"""User simulators: the LLM user on the wire (local server), scripted, replay and human users."""

from __future__ import annotations

import asyncio
import json
import pickle
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cpu_clock import cpu_clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airline_gym.domain.prompts import GREETING, STOP, TRANSFER, is_user_stop, user_system_prompt
from airline_gym.domain.tasks import Task, TaskSet, load_task_set
from airline_gym.testing import OpenAIServer, Reply
from airline_gym.users import (
    USER_MODEL_ENV,
    HumanUser,
    LLMUser,
    ReplayUser,
    ScriptedUser,
    UserSimulator,
    UserSimulatorError,
    make_user,
)
from airline_gym.users.scripted import first_person

TRAJECTORIES = Path(__file__).resolve().parents[3] / "shared" / "trajectories"
AIDE = TRAJECTORIES / "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json"
HANDOFF = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."


@cache
def tasks() -> TaskSet:
    return load_task_set()


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


def llm_user(server: OpenAIServer, model: str | None = "openai/user-sim", **args: Any) -> LLMUser:
    llm_args: dict[str, Any] = {
        "api_base": server.base_url,
        "api_key": "sk-test",
        "timeout": 5.0,
        "max_retries": 0,
        "backoff": 0.01,
    }
    llm_args.update(args)
    return LLMUser(model, llm_args=llm_args)


# -- LLMUser ---------------------------------------------------------------------------------


def test_llm_user_prompt_and_role_flipping_on_the_wire(server: OpenAIServer) -> None:
    task = tasks()[17]
    server.push(Reply("I want to change my trip."), Reply("omar_rossi_1241"), Reply("Yes."))
    user = llm_user(server)
    user.reset(task, seed=1234)
    agent_turns = [GREETING, "What is your user id?", "Shall I proceed?"]
    dialogue: list[dict[str, Any]] = []
    replies = []
    for agent_text in agent_turns:
        dialogue.append({"role": "assistant", "content": agent_text})
        replies.append(user.reply(dialogue))
        dialogue.append({"role": "user", "content": replies[-1]})
    assert replies == ["I want to change my trip.", "omar_rossi_1241", "Yes."]

    system = {"role": "system", "content": user_system_prompt(task)}
    first, last = server.requests[0], server.requests[-1]
    assert first["messages"] == [system, {"role": "user", "content": GREETING}]
    assert last["messages"] == [
        system,
        {"role": "user", "content": GREETING},
        {"role": "assistant", "content": "I want to change my trip."},
        {"role": "user", "content": "What is your user id?"},
        {"role": "assistant", "content": "omar_rossi_1241"},
        {"role": "user", "content": "Shall I proceed?"},
    ]
    for body in server.requests:
        assert body["model"] == "user-sim"
        assert body["temperature"] == 0
        assert body["seed"] == 1234
        assert "tools" not in body


def test_llm_user_sends_no_seed_without_one(server: OpenAIServer) -> None:
    server.push(Reply("Hello."))
    user = llm_user(server)
    user.reset(tasks()[0])
    assert user.reply([{"role": "assistant", "content": GREETING}]) == "Hello."
    assert "seed" not in server.requests[0]


@pytest.mark.parametrize(
    ("fault", "cause"),
    [("hang", "timeout (0.5 s)"), ("500", "HTTP 500"), ("empty", "empty reply")],
)
def test_llm_user_failure_is_a_user_simulator_error(
    server: OpenAIServer, fault: str, cause: str
) -> None:
    server.default = Reply(fault=fault, hang_seconds=10)
    user = llm_user(server, timeout=0.5, max_retries=1)
    user.reset(tasks()[0], seed=3)
    start = time.monotonic()
    with pytest.raises(UserSimulatorError) as info:
        user.reply([{"role": "assistant", "content": GREETING}])
    assert time.monotonic() - start < 6.0
    message = str(info.value)
    assert cause in message and "after 2 attempts" in message and "openai/user-sim" in message
    assert len(server.requests) == 2


def test_llm_user_check_ready_without_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv(USER_MODEL_ENV, raising=False)
    user = LLMUser()
    assert user.model == "gpt-4.1"
    with cpu_clock() as spent, pytest.raises(UserSimulatorError) as info:
        user.check_ready()
    # told without importing litellm (seconds of CPU); CPU time, so a busy machine cannot fail it
    assert spent() < 0.5
    assert "OPENAI_API_KEY" in str(info.value) and 'user="scripted"' in str(info.value)
    LLMUser(llm_args={"api_base": "http://127.0.0.1:9/v1"}).check_ready()  # local: no key needed


def test_llm_user_model_from_environment(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(USER_MODEL_ENV, "openai/env-user-model")
    server.push(Reply("Hi there."))
    user = llm_user(server, model=None)
    assert user.model == "openai/env-user-model"
    assert llm_user(server, model="openai/explicit").model == "openai/explicit"
    user.reset(tasks()[0])
    user.reply([{"role": "assistant", "content": GREETING}])
    assert server.requests[0]["model"] == "env-user-model"


def test_llm_user_areply_is_async(server: OpenAIServer) -> None:
    server.push(Reply("first"), Reply("second"))
    user = llm_user(server)
    user.reset(tasks()[11], seed=5)

    def sync_reply(dialogue: Any) -> str:
        raise AssertionError("areply must not wrap the blocking reply() in a thread")

    user.reply = sync_reply  # type: ignore[method-assign]

    async def both() -> list[str]:
        greeting = [{"role": "assistant", "content": GREETING}]
        return list(await asyncio.gather(user.areply(greeting), user.areply(greeting)))

    assert sorted(asyncio.run(both())) == ["first", "second"]
    assert all(body["seed"] == 5 for body in server.requests)


def test_llm_user_pickles(server: OpenAIServer) -> None:
    server.push(Reply("after pickling"))
    user = llm_user(server)
    user.reset(tasks()[18], seed=9)
    clone = pickle.loads(pickle.dumps(user))
    dialogue = [{"role": "assistant", "content": GREETING}]
    assert clone.messages(dialogue) == user.messages(dialogue)
    assert clone.reply(dialogue) == "after pickling"
    assert server.requests[0]["seed"] == 9


def test_llm_user_needs_reset() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        LLMUser("openai/x", llm_args={"api_base": "http://127.0.0.1:9/v1"}).reply([])


# -- ScriptedUser ------------------------------------------------------------------------------

TASK_IDS = ["0", "3", "11", "17", "18"]


def scripted(task_id: str, **kwargs: Any) -> ScriptedUser:
    """The keyword customer on a benchmark task (tasks with an intent have their own tests)."""
    kwargs.setdefault("intents", False)
    user = ScriptedUser(**kwargs)
    user.reset(tasks()[task_id])
    return user


def known_user_id(task: Task) -> str:
    return task.instructions["known_info"].split("user id is")[1].strip(" :.'\n").split()[0]


def after_opening(user: ScriptedUser, *agent: str) -> list[dict[str, Any]]:
    """A dialogue: greeting, the opening, then ``agent`` messages with filler replies between."""
    dialogue = [
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": user.opening()},
    ]
    for i, text in enumerate(agent):
        if i:
            dialogue.append({"role": "user", "content": "Okay."})
        dialogue.append({"role": "assistant", "content": text})
    return dialogue


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_scripted_opening_states_request_and_user_id(task_id: str) -> None:
    user = scripted(task_id)
    task = tasks()[task_id]
    opening = user.reply([{"role": "assistant", "content": GREETING}])
    assert known_user_id(task) in opening
    assert not is_user_stop(opening)
    assert opening == user.opening() == scripted(task_id).reply([])


def test_scripted_opening_is_first_person() -> None:
    opening = scripted("0").opening()
    assert "I want to cancel reservation EHGLP3." in opening
    assert "You " not in opening and " you " not in opening
    assert first_person("You want to cancel your flight because you were sick.") == (
        "I want to cancel my flight because I was sick."
    )
    assert first_person("They told you that you're covered.") == "They told me that I'm covered."


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_scripted_answers_identity_questions(task_id: str) -> None:
    user = scripted(task_id)
    task = tasks()[task_id]
    reply = user.reply(after_opening(user, "What is your user id?"))
    assert known_user_id(task) in reply
    reply = user.reply(after_opening(user, "Could you please provide your reservation ID?"))
    assert not is_user_stop(reply)
    if user.profile and user.profile.reservation_ids:
        assert all(r in reply for r in user.profile.reservation_ids)
    else:
        assert "don't" in reply


def test_scripted_identity_from_known_info() -> None:
    user = scripted("3")  # known_info: user id and confirmation number JMO1MG
    reply = user.reply(
        after_opening(
            user, "To help, I need:\n1. Your user ID\n2. Your reservation ID\n3. Your full name"
        )
    )
    assert "anya_garcia_5901" in reply and "JMO1MG" in reply and "Anya Garcia" in reply
    # The agent quoting the reservation id is not asking for it: the confirmation rule answers.
    text = "Reservation ID: JMO1MG has 4 free bags. Shall I proceed?"
    reply = user.reply(after_opening(user, text))
    assert reply.lower().startswith("yes")


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_scripted_confirms_stops_and_transfers(task_id: str) -> None:
    user = scripted(task_id)
    assert "yes" in user.reply(after_opening(user, "Shall I proceed? (yes/no)")).lower()
    assert STOP in user.reply(after_opening(user, "Is there anything else I can help you with?"))
    assert user.reply(after_opening(user, HANDOFF)) == TRANSFER
    assert user.reply(after_opening(user, "Let me check.", "Let me check.")) == STOP
    assert user.reply(after_opening(user, "Let me check.", "Done checking.")) != STOP


def test_scripted_transfer_needs_the_hand_off() -> None:
    user = scripted("6")
    text = "I can't escalate this without transferring you to a human agent."
    assert user.reply(after_opening(user, text)) != TRANSFER


def test_scripted_stops_after_max_turns() -> None:
    user = scripted("17", max_turns=3)
    dialogue = after_opening(user, "Let me look.", "Still looking.")
    assert not is_user_stop(user.reply(dialogue))  # two customer turns so far
    dialogue += [{"role": "user", "content": "Okay."}, {"role": "assistant", "content": "Hmm."}]
    assert user.reply(dialogue) == STOP


def test_scripted_is_deterministic() -> None:
    agent = [
        GREETING,
        "Please provide your user id and reservation id.",
        "I found reservation FQ8APE. Would you like to pay with your gift card?",
        "Here is the summary. Do you confirm?",
        "All done. Anything else?",
    ]
    for task_id in TASK_IDS:
        runs = []
        for seed in (None, 1, 2):
            user = ScriptedUser(intents=False)
            user.reset(tasks()[task_id], seed)
            dialogue: list[dict[str, Any]] = []
            for text in agent:
                dialogue.append({"role": "assistant", "content": text})
                dialogue.append({"role": "user", "content": user.reply(dialogue)})
            runs.append(json.dumps(dialogue))
        assert runs[0] == runs[1] == runs[2]
        assert json.loads(runs[0])[-1]["content"] == STOP


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    task_id=st.sampled_from(TASK_IDS),
    history=st.lists(st.text(max_size=80), max_size=4),
    text=st.text(max_size=400),
)
def test_scripted_always_says_something(task_id: str, history: list[str], text: str) -> None:
    user = scripted(task_id)
    dialogue = after_opening(user, *history, text)
    reply = user.reply(dialogue)
    assert isinstance(reply, str) and reply.strip()
    assert reply == scripted(task_id).reply(dialogue)


def test_scripted_needs_reset() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        ScriptedUser().reply([])


# -- ReplayUser --------------------------------------------------------------------------------


def recorded_user_turns(simulation: dict[str, Any]) -> list[str]:
    return [
        m["content"] for m in simulation["messages"] if m["role"] == "user" and m.get("content")
    ]


def play(user: UserSimulator, max_turns: int = 100) -> list[str]:
    """Let ``user`` talk to an agent that always says the same thing, until it stops."""
    dialogue = [{"role": "assistant", "content": GREETING}]
    said: list[str] = []
    while len(said) < max_turns:
        said.append(user.reply(dialogue))
        if said[-1] == STOP:
            break
        dialogue += [
            {"role": "user", "content": said[-1]},
            {"role": "assistant", "content": "Something unrelated."},
        ]
    return said


@pytest.mark.skipif(not AIDE.is_file(), reason="../shared/trajectories is absent")
def test_replay_real_trajectory() -> None:
    results = json.loads(AIDE.read_text(encoding="utf-8"))
    simulation = next(s for s in results["simulations"] if s["task_id"] == "13")
    expected = recorded_user_turns(simulation)
    assert len(expected) >= 2

    user = ReplayUser.from_results(AIDE, task_id="13")
    assert user.simulation_id == simulation["id"] and user.turns == tuple(expected)
    user.reset(tasks()[13])
    said = play(user)
    assert said[: len(expected)] == expected
    if not is_user_stop(expected[-1]):
        assert said[len(expected)] == STOP
    assert user.reply([{"role": "user", "content": "x"}] * len(expected)) == STOP

    by_id = ReplayUser(str(AIDE), simulation_id=simulation["id"])
    assert by_id.turns == user.turns
    assert ReplayUser(simulation).turns == user.turns
    with pytest.warns(UserWarning, match="task 13"):
        user.reset(tasks()[0])
    with pytest.raises(ValueError, match="simulation_id"):
        ReplayUser(AIDE)
    with pytest.raises(ValueError, match="no simulation"):
        ReplayUser.from_results(AIDE, task_id="13", trial=7)


def test_replay_list_of_strings() -> None:
    user = make_user("replay", source=["Hi, I need help.", "My id is x_y_1234.", "Thanks!"])
    assert user.offline
    user.reset(tasks()[0])
    assert play(user) == ["Hi, I need help.", "My id is x_y_1234.", "Thanks!", STOP]


# -- HumanUser ---------------------------------------------------------------------------------


def test_human_user_reads_and_reasks() -> None:
    lines = iter(["", "   ", "I want to cancel."])
    prompts: list[str] = []
    shown: list[str] = []

    def fake_input(prompt: str) -> str:
        prompts.append(prompt)
        return next(lines)

    user = HumanUser(input_fn=fake_input, output_fn=shown.append)
    user.reset(tasks()[0])
    assert "Emma Kim" in shown[0]  # the scenario is shown
    reply = user.reply(
        [
            {"role": "assistant", "content": GREETING},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "What is your user id?"},
        ]
    )
    assert reply == "I want to cancel."
    assert len(prompts) == 3
    assert shown[1:] == ["agent> What is your user id?"]


@pytest.mark.parametrize("error", [EOFError, KeyboardInterrupt])
def test_human_user_end_of_input_stops(error: type[BaseException]) -> None:
    def fake_input(prompt: str) -> str:
        raise error

    user = HumanUser(input_fn=fake_input, output_fn=lambda text: None, show_scenario=False)
    user.reset(tasks()[0])
    assert user.reply([{"role": "assistant", "content": GREETING}]) == STOP


# -- make_user ---------------------------------------------------------------------------------


def test_make_user() -> None:
    assert isinstance(make_user("scripted", model=None, llm_args=None, data_dir="/x"), ScriptedUser)
    assert isinstance(make_user("Human"), HumanUser)
    llm = make_user("llm", model="openai/m", llm_args={"api_base": "http://127.0.0.1:9/v1"})
    assert isinstance(llm, LLMUser) and llm.model == "openai/m"
    instance = ScriptedUser()
    assert make_user(instance, model=None) is instance
    with pytest.raises(ValueError, match="scripted"):
        make_user("robot")
    with pytest.raises(TypeError, match="model"):
        make_user("scripted", model="gpt-4.1")
