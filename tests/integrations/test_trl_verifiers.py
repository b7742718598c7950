"""The TRL environment_factory and verifiers MultiTurnEnv adapters, driven as those libraries do.

Neither library is installed here (both pull torch/transformers), so the drivers below follow
their documented loops: TRL calls ``reset(**row)``, then tool methods by name with keyword
arguments, then reads the reward; verifiers runs ``setup_state``, then alternates model replies
with ``env_response`` until a stop condition fires, then scores the state.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import pickle
import re
import sys
import typing

import pytest

from airline_gym.agents import tool_call_message
from airline_gym.domain.schemas import done_schema, tool_schemas
from airline_gym.integrations.trl import (
    TRL_INSTRUCTIONS,
    AirlineToolEnv,
    airline_reward,
    dataset_rows,
    make_environment_factory,
)
from airline_gym.integrations.verifiers import AirlineVerifiersEnv
from airline_gym.integrations.verifiers import airline_reward as vf_reward
from airline_gym.integrations.verifiers import dataset_rows as vf_rows

# --- TRL ---------------------------------------------------------------------------------------


def trl_tools(env) -> dict:
    """TRL's discovery rule: public bound methods other than reset and get_reward."""
    return {
        name: member
        for name, member in inspect.getmembers(env, predicate=inspect.ismethod)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


# transformers.utils.chat_template_utils' Google-docstring parsing, for when it is absent
_DESCRIPTION = re.compile(r"^(.*?)[\n\s]*(Args:|Returns:|Raises:|\Z)", re.DOTALL)
_ARGS = re.compile(r"\n\s*Args:\n\s*(.*?)[\n\s]*(Returns:|Raises:|\Z)", re.DOTALL)
_ARG_SPLIT = re.compile(r"(?:^|\n)\s*(\w+):\s*(.*?)\s*(?=\n\s*\w+:|\Z)", re.DOTALL)


def hint_schema(hint) -> dict:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return {"type": "string", "enum": list(args)}
    if origin is list:
        return {"type": "array", "items": hint_schema(args[0])}
    return {str: {"type": "string"}, int: {"type": "integer"}}.get(hint, {"type": "object"})


def json_schema(method) -> dict:
    """get_json_schema(method) from transformers if installed, else the same rules here."""
    try:
        from transformers.utils import get_json_schema
    except ImportError:
        pass
    else:
        return get_json_schema(method)
    doc = inspect.getdoc(method)
    assert doc, f"{method.__name__} has no docstring"
    hints = typing.get_type_hints(method)
    signature = inspect.signature(method)
    properties, required = {}, []
    args_match = _ARGS.search(doc)
    arg_docs = dict(_ARG_SPLIT.findall(args_match.group(1))) if args_match else {}
    for name, param in signature.parameters.items():
        assert param.annotation is not inspect.Parameter.empty, f"{name} lacks a type hint"
        assert name in arg_docs, f"{method.__name__}: no description for {name!r}"
        properties[name] = {**hint_schema(hints[name]), "description": arg_docs[name]}
        if param.default is inspect.Parameter.empty:
            required.append(name)
    parameters = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    description = _DESCRIPTION.search(doc).group(1).strip()
    return {"type": "function", "function": {"name": method.__name__, "description": description,
                                             "parameters": parameters}}  # fmt: skip


def test_trl_tools_mirror_the_env_tool_schemas():
    env = AirlineToolEnv(user="scripted")
    tools = trl_tools(env)
    ours = {s["function"]["name"]: s["function"] for s in [*tool_schemas(), done_schema()]}
    assert set(tools) == set(ours) | {"respond_to_user"}
    for name, method in tools.items():
        schema = json_schema(method)["function"]
        assert schema["name"] == name
        if name == "respond_to_user":
            assert schema["parameters"]["required"] == ["message"]
            continue
        reference = ours[name]
        assert schema["description"] == " ".join(reference["description"].split())
        params, ref_params = schema["parameters"], reference["parameters"]
        assert params.get("required", []) == ref_params.get("required", [])
        assert list(params["properties"]) == list(ref_params["properties"])
        for arg, prop in params["properties"].items():
            ref = ref_params["properties"][arg]
            assert prop["type"] == ref["type"]
            assert prop.get("enum") == ref.get("enum")
            assert prop["description"].startswith(" ".join(ref["description"].split()))
            if ref["type"] == "array":  # the item model's keys are spelled out for the model
                model = ref["items"]["anyOf"][0]["$ref"].rsplit("/", 1)[-1]
                for key in ref_params["$defs"][model]["properties"]:
                    assert key in prop["description"]
        assert typing.get_type_hints(method)["return"] is str


def test_trl_gold_episode_scores_1(tau2_tasks):
    factory = pickle.loads(pickle.dumps(make_environment_factory(user="scripted")))
    env = factory()
    row = dataset_rows(task_ids=["17"])[0]
    assert row["prompt"][0]["content"].endswith(TRL_INSTRUCTIONS)
    prompt = copy.deepcopy(row["prompt"])
    prompt[-1]["content"] += env.reset(**row)  # what GRPOTrainer does with the observation
    assert "Omar Rossi" in prompt[-1]["content"] and env.task_id == "17"
    assert env.get_reward() == 0.0
    reply = env.respond_to_user("Sure. Which reservation would you like to change?")
    assert isinstance(reply, str) and reply
    assert env.get_user_details(user_id="nobody").startswith("Error: ")  # errors are results
    for action in tau2_tasks["17"].actions:
        result = trl_tools(env)[action.name](**action.arguments)
        assert json.loads(result)["reservation_id"] == "FQ8APE"
    assert env.get_reward() == 0.0  # still running
    assert env.done() == "Conversation ended by the agent."
    assert env.get_reward() == 1.0 and airline_reward([env]) == [1.0]
    assert env.info["reward_info"]["db_match"] is True
    with pytest.raises(ValueError, match="over"):
        env.calculate(expression="1 + 1")


def test_trl_env_is_reused_across_resets_and_scores_failures_0():
    env = make_environment_factory(user="scripted")()
    env.reset(task_id="17", seed=1)
    assert env.done() and env.get_reward() == 0.0  # no changes made: DB check fails
    env.reset(task_id=3, seed=2)  # pooled instance, new episode
    assert env.task_id == "3" and env.get_reward() == 0.0
    assert env.calculate("2 + 2") == "4.0"  # positional arguments work too
    env.reset(task_id="3")
    assert env.get_reward() == 0.0  # unfinished episodes score 0
    with pytest.raises(ValueError, match="reset"):
        AirlineToolEnv().calculate(expression="1")


def test_trl_dataset_rows():
    rows = dataset_rows(split="train", repeats=2, seed=100)
    assert len(rows) == 60 and rows[0]["seed"] == 100 and rows[-1]["seed"] == 159
    assert rows[0]["task_id"] == rows[30]["task_id"]
    assert [m["role"] for m in rows[0]["prompt"]] == ["system", "user"]


# --- verifiers ---------------------------------------------------------------------------------


class ScriptedModel:
    """A chat model replying with fixed assistant messages, recording what it was sent."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def __call__(self, prompt, tools):
        self.prompts.append(copy.deepcopy(prompt))
        return self.replies.pop(0)


async def verifiers_rollout(env, row, model):
    """MultiTurnEnv.rollout + Rubric scoring, as verifiers runs them."""
    state = {
        "input": copy.deepcopy(row),
        "prompt": copy.deepcopy(row["prompt"]),
        "info": row["info"],
        "answer": row["answer"],
        "task": row["task"],
        "example_id": row["example_id"],
        "oai_tools": env.oai_tools,
        "trajectory": [],
        "is_completed": False,
        "reward": None,
    }
    state = await env.setup_state(state)
    while not await env.is_completed(state):
        if not state["trajectory"]:
            prompt = list(state["prompt"])
        else:
            last = state["trajectory"][-1]
            messages = list(last["prompt"]) + list(last["completion"])
            prompt = messages + await env.env_response(messages, state)
        reply = model(prompt, state["oai_tools"])
        state["trajectory"].append({"prompt": prompt, "completion": [reply]})
    state["reward"] = vf_reward(state=state, prompt=state["prompt"], completion=state["completion"])
    return state


def gold_replies(task):
    replies = [tool_call_message(a.name, a.arguments, f"g{i}") for i, a in enumerate(task.actions)]
    return [*replies, tool_call_message("done", {}, "end")]


def test_verifiers_gold_rollout_scores_1(tau2_tasks):
    env = AirlineVerifiersEnv(env_kwargs={"user": "scripted"})
    row = vf_rows(task_ids=["17"], seed=7)[0]
    model = ScriptedModel(gold_replies(tau2_tasks["17"]))
    state = asyncio.run(verifiers_rollout(env, row, model))
    assert state["reward"] == 1.0 and state["stop_condition"] == "airline_episode_over"
    assert state["airline_termination_reason"] == "agent_stop"
    assert state["airline_reward_info"]["db_match"] is True
    assert "airline" not in state  # the cleanup released the env
    # the model saw system, greeting and the customer first, then each tool result in turn
    first = model.prompts[0]
    assert [m["role"] for m in first] == ["system", "assistant", "user"]
    assert "Omar Rossi" in first[-1]["content"]
    second = model.prompts[1]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "g0"
    assert json.loads(second[-1]["content"])["reservation_id"] == "FQ8APE"
    assert state["completion"][-1]["tool_calls"][0]["function"]["name"] == "done"
    assert len(state["trajectory"]) == 4


def test_verifiers_wrong_and_unfinished_rollouts_score_0():
    env = AirlineVerifiersEnv(env_kwargs={"user": "scripted"})
    row = vf_rows(task_ids=["17"])[0]
    quitter = ScriptedModel([tool_call_message("done", {}, "end")])
    state = asyncio.run(verifiers_rollout(env, row, quitter))
    assert state["reward"] == 0.0 and state["airline_termination_reason"] == "agent_stop"
    assert state["stop_condition"] == "airline_episode_over"

    chatty = AirlineVerifiersEnv(env_kwargs={"user": "scripted"}, max_turns=2)
    reader = ScriptedModel([tool_call_message("list_all_airports", {}, f"r{i}") for i in range(3)])
    state = asyncio.run(verifiers_rollout(chatty, row, reader))
    assert state["stop_condition"] == "max_turns_reached" and state["reward"] == 0.0
    assert "airline_reward" not in state and "airline" not in state


def test_verifiers_customer_turns_and_hook_shapes():
    env = AirlineVerifiersEnv(env_kwargs={"user": "scripted"})
    row = vf_rows(task_ids=["3"])[0]
    talk = ScriptedModel([
        {"role": "assistant", "content": "You can check 4 bags."},
        tool_call_message("done", {}, "end"),
    ])  # fmt: skip
    state = asyncio.run(verifiers_rollout(env, row, talk))
    assert talk.prompts[1][-1]["role"] == "user"  # the customer's reply came from env_response
    assert state["reward"] == 1.0  # task 3 only needs the "4" said
    # the hooks have verifiers' shapes and markers
    for name in ("setup_state", "env_response", "airline_episode_over", "airline_cleanup"):
        assert inspect.iscoroutinefunction(getattr(env, name))
    assert env.airline_episode_over.stop and env.airline_episode_over.stop_priority == 100
    assert env.airline_cleanup.cleanup
    assert list(inspect.signature(env.env_response).parameters)[:2] == ["messages", "state"]
    rows = vf_rows(split="test", repeats=2)
    assert len(rows) == 40 and rows[-1]["example_id"] == 39 and rows[0]["task"] == "airline"


def test_load_environment_wires_a_multiturn_env(monkeypatch):
    """load_environment against a stand-in verifiers module (the real one pulls torch)."""
    pytest.importorskip("datasets")
    import types

    from airline_gym.integrations import verifiers as adapter

    class MultiTurnEnv:  # verifiers' constructor: known kwargs, the rest become attributes
        def __init__(self, max_turns=-1, dataset=None, rubric=None, oai_tools=None, **kwargs):
            self.max_turns, self.dataset, self.rubric, self.oai_tools = (
                max_turns, dataset, rubric, oai_tools,
            )  # fmt: skip
            for key, value in kwargs.items():
                setattr(self, key, value)

        async def setup_state(self, state):
            raise AssertionError("the airline hook must take precedence")

    class Rubric:
        def __init__(self, funcs, weights):
            self.funcs, self.weights = funcs, weights

    fake = types.SimpleNamespace(MultiTurnEnv=MultiTurnEnv, Rubric=Rubric)
    monkeypatch.setitem(sys.modules, "verifiers", fake)
    adapter._verifiers_env_class.cache_clear()
    try:
        env = adapter.load_environment(
            task_ids=["17", "3"], repeats=2, env_kwargs={"user": "scripted"}, max_turns=30
        )
        assert isinstance(env, MultiTurnEnv) and isinstance(env, adapter.AirlineHooks)
        assert env.env_kwargs == {"user": "scripted"} and env.max_turns == 30
        assert env.dataset.num_rows == 4 and env.dataset[1]["info"]["task_id"] == "3"
        assert env.rubric.funcs == [vf_reward] and env.rubric.weights == [1.0]
        assert [t["function"]["name"] for t in env.oai_tools][-1] == "done"
        row = vf_rows(task_ids=["3"])[0]
        state = {"prompt": row["prompt"], "info": row["info"], "trajectory": []}
        state = asyncio.run(env.setup_state(state))
        assert [m["role"] for m in state["prompt"]] == ["system", "assistant", "user"]
    finally:
        adapter._verifiers_env_class.cache_clear()
