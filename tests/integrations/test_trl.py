"""The TRL adapter with the real TRL and transformers: tool schemas, episodes, GRPO training.

``GRPOTrainer.train()`` runs two steps on CPU with a tiny random Qwen3 built here
(``tiny_policy``): TRL renders the tools with transformers, generates, parses the tool calls,
runs them against the env, scores with ``get_reward`` and takes optimiser steps; the test checks
that the rewards TRL logs are the env's grades, replayed independently in process.
"""

from __future__ import annotations

import copy
import inspect
import json
import pickle
import re

import pytest
from extras import require
from readme_examples import readme_example, run_example

from airline_gym.env.airline_env import AirlineEnv
from airline_gym.integrations.trl import (
    PROTOCOL,
    RESPOND_TOOL,
    TRL_INSTRUCTIONS,
    AirlineToolEnv,
    dataset_rows,
    make_environment_factory,
    schema_gaps,
    trl_schema,
)

require("trl", "transformers")


def tool_methods(env: AirlineToolEnv) -> dict:
    """TRL's discovery rule: public functions of the class other than reset and get_reward."""
    return {
        name: getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def test_what_trl_renders_is_the_protocols_tools_byte_for_byte():
    """transformers' schema of each method, in TRL's (alphabetical) order, is the tool-reply
    protocol's array exactly (what eval and warm-start send under it); each is the reference's
    tool as far as transformers can say it, descriptions verbatim."""
    env = AirlineToolEnv(user="scripted")
    methods = tool_methods(env)
    rendered = [trl_schema(method) for method in methods.values()]  # raises on a bad hint
    assert json.dumps(rendered) == json.dumps(env.env.tools)  # key order included
    assert env.env.protocol.name == "tool-reply" and PROTOCOL == "tool-reply"
    reference = {t["function"]["name"]: t for t in AirlineEnv(user="scripted").tools}
    assert list(methods) == sorted([*reference, RESPOND_TOOL])
    for schema in rendered:
        name = schema["function"]["name"]
        assert "return" not in schema["function"]  # the reference's schemas have none
        if name == RESPOND_TOOL:
            assert schema["function"]["parameters"]["required"] == ["message"]
            continue
        assert schema_gaps(reference[name], schema) == [], name
        ref_fn = reference[name]["function"]
        assert schema["function"]["description"] == ref_fn["description"]  # verbatim
        for arg, prop in ref_fn["parameters"]["properties"].items():
            ours = schema["function"]["parameters"]["properties"][arg]
            head = re.sub(r"\s*\n+\s*", " ", prop["description"].strip())
            assert ours["description"].startswith(head)
    # list arguments of objects: the item keys reach the model through the description
    flights = trl_schema(env.book_reservation)["function"]["parameters"]["properties"]["flights"]
    assert flights["items"] == {"type": "object"}
    assert "flight_number (string)" in flights["description"]


def test_another_protocol_is_refused_in_one_line():
    from airline_gym.errors import ConfigError

    for build in (make_environment_factory, AirlineToolEnv):
        with pytest.raises(ConfigError, match="TRL needs the 'tool-reply' protocol"):
            build(user="scripted", protocol="gym")


def test_schema_gaps_reports_a_real_difference():
    env = AirlineToolEnv(user="scripted")
    reference = copy.deepcopy(
        next(t for t in AirlineEnv(user="scripted").tools if t["function"]["name"] == "calculate")
    )
    reference["function"]["description"] += " Changed."
    assert schema_gaps(reference, trl_schema(env.calculate)) == [
        f"description: {trl_schema(env.calculate)['function']['description']!r} != "
        f"{reference['function']['description']!r}"
    ]


def test_gold_episode_through_the_tool_methods(tau2_tasks):
    factory = pickle.loads(pickle.dumps(make_environment_factory(user="scripted")))
    env = factory()
    row = dataset_rows(task_ids=["17"])[0]
    assert row["prompt"][0]["content"].endswith(TRL_INSTRUCTIONS)
    opener = env.reset(**row)
    assert "Omar Rossi" in opener and env.task_id == "17" and env.get_reward() == 0.0
    assert env.respond_to_user("Which reservation would you like to change?")
    assert env.get_user_details(user_id="nobody").startswith("Error: ")  # errors are results
    for action in tau2_tasks["17"].actions:
        result = tool_methods(env)[action.name](**action.arguments)
        assert json.loads(result)["reservation_id"] == "FQ8APE"
    assert env.get_reward() == 0.0  # still running
    assert env.done() == "Conversation ended by the agent."
    assert env.get_reward() == 1.0 and env.info["reward_info"]["db_match"] is True
    with pytest.raises(ValueError, match="over"):
        env.calculate(expression="1 + 1")
    env.reset(task_id=3, seed=2)  # the same instance, a new episode
    assert env.task_id == "3" and env.get_reward() == 0.0
    assert env.calculate("2 + 2") == "4.0"  # positional arguments
    assert env.book_reservation(user_id=7).startswith("Error: ")  # bad arguments: the env's error


# --- GRPOTrainer.train() --------------------------------------------------------------------------
TASKS = ["17", "3"]
OPENERS = {"gold": "Which reservation is it?", "quit": "How can I help?"}


def script_calls(name: str, tasks) -> list[tuple[str, dict]]:
    """The tool calls of a script: "gold" plays task 17's solution, "quit" ends at once."""
    writes = [(a.name, a.arguments) for a in tasks["17"].actions] if name == "gold" else []
    return [(RESPOND_TOOL, {"message": OPENERS[name]}), *writes, ("done", {})]


def script_turns(name: str, tasks) -> list[str]:
    from tiny_policy import tool_call_text  # imports torch and transformers

    return [tool_call_text(n, a) for n, a in script_calls(name, tasks)] + ["Goodbye."]


def replay(task_id: str, seed: int, script: str, tasks) -> float:
    """The grade of a script's calls played straight against a tau3 AirlineEnv (no TRL), the
    README example's benchmark."""
    env = AirlineEnv(user="scripted", benchmark="tau3")
    env.reset(seed=seed, options={"task": task_id})
    reward = 0.0
    for i, (name, arguments) in enumerate(script_calls(script, tasks)):
        if env.episode.done:
            break
        if name == RESPOND_TOOL:
            action = {"role": "assistant", "content": arguments["message"]}
        else:
            call = {"name": name, "arguments": json.dumps(arguments)}
            calls = [{"id": f"c{i}", "type": "function", "function": call}]
            action = {"role": "assistant", "content": None, "tool_calls": calls}
        reward += env.step(action)[1]
    return reward


@pytest.mark.long  # ~20 s: a real GRPOTrainer on CPU
def test_grpo_trainer_trains_two_steps_with_env_rewards(tau3_tasks, tmp_path, monkeypatch):
    from tiny_policy import build_policy, build_tokenizer
    from transformers import TrainerCallback
    from trl import GRPOConfig

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    probe = AirlineToolEnv(user="scripted")
    tools_text = json.dumps([trl_schema(m) for m in tool_methods(probe).values()])
    scripts = [script_turns("gold", tau3_tasks), script_turns("quit", tau3_tasks)]
    corpus = [dataset_rows(task_ids=["17"])[0]["prompt"][0]["content"], tools_text]
    tokenizer = build_tokenizer(corpus + [t for s in scripts for t in s])
    model = build_policy(tokenizer, scripts)
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    seeds = {r["task_id"]: r["seed"] for r in dataset_rows(task_ids=TASKS, benchmark="tau3")}

    seen: list[list[tuple[str, str, float, int]]] = []

    class Grades(TrainerCallback):
        """After each step: every rollout's task, script, grade and tool calls in the env."""

        def on_step_end(self, args, state, control, **kwargs):
            step = []
            for env in namespace["trainer"].environments:
                transcript = env.env.episode.transcript()
                said = {m["content"] for m in transcript if m["role"] == "assistant"}
                script = next(k for k, v in OPENERS.items() if v in said)
                calls = sum(len(m.get("tool_calls") or []) for m in transcript)
                assert env.env.benchmark == "tau3"  # the README example's rows and env
                step.append((env.task_id, script, float(env.info["reward_info"]["reward"]), calls))
            seen.append(step)

    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=1024,
        gradient_checkpointing=False,
        learning_rate=1e-2,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        data_seed=0,
    )
    namespace = {"model": model, "tokenizer": tokenizer, "args": args, "TASKS": TASKS}
    code = readme_example("trl").replace("trainer.train()", "")
    run_example("trl", namespace, code)  # the README example, as written
    trainer = namespace["trainer"]
    trainer.add_callback(Grades())
    trainer.train()

    assert len(seen) == 2 and all(len(step) == 4 for step in seen)
    for step in seen:  # each rollout: a real episode, graded as its calls replayed in process
        assert sorted(s for _, s, _, _ in step) == ["gold", "gold", "quit", "quit"]
        for task_id, script, grade, calls in step:
            assert calls == len(script_calls(script, tau3_tasks)) - 1  # + one customer message
            assert grade == replay(task_id, seeds[task_id], script, tau3_tasks)
    grades = [[g for _, _, g, _ in step] for step in seen]
    assert sorted({g for step in grades for g in step}) == [0.0, 1.0]
    assert list(trainer._logs["rewards"]["AirlineToolEnv"]) == grades[-1]  # per rollout, last step
    logged = [h for h in trainer.state.log_history if "rewards/AirlineToolEnv/mean" in h]
    assert [h["rewards/AirlineToolEnv/mean"] for h in logged] == [
        pytest.approx(sum(step) / 4) for step in grades
    ]
    assert [h["reward"] for h in logged] == [h["rewards/AirlineToolEnv/mean"] for h in logged]
    assert len(trainer.reward_funcs) == 1  # one reward path: get_reward, counted once
    assert all(h["tools/failure_frequency"] == 0.0 for h in logged)
    if 1.0 in grades[0] or 1.0 in grades[1]:  # a mixed group: non-zero advantages, a real step
        changed = [k for k, v in model.named_parameters() if not torch_equal(v, before[k])]
        assert changed


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a.detach(), b))


# --- benchmark versions ---------------------------------------------------------------------------
def play_gold(env: AirlineToolEnv, messages: list[dict]) -> None:
    """The tau3 case's messages through the tool methods (text goes to respond_to_user)."""
    for message in messages:
        if not message.get("tool_calls"):
            env.respond_to_user(message["content"])
        for call in message.get("tool_calls") or []:
            function = call["function"]
            tool_methods(env)[function["name"]](**json.loads(function["arguments"]))


def test_tau3_rows_play_tau3_tasks_with_tau3_s_customer(tau3):
    import tau3_case as case

    with case.customer_server() as server:
        factory = make_environment_factory(benchmark="tau3", **case.customer_kwargs(server))
        env = pickle.loads(pickle.dumps(factory))()
        (row,) = dataset_rows(task_ids=[int(case.TASK)], seed=3, benchmark="tau3")
        assert (row["task_id"], row["seed"], row["benchmark"]) == (case.TASK, 3, "tau3")
        assert env.reset(**row) == case.OPENER and env.env.benchmark == "tau3"
        play_gold(env, case.gold_messages())
    assert env.info["termination_reason"] == "agent_stop"
    assert env.get_reward() == case.check_grades_differ() == 1.0  # tau2 would grade it 0.0
    case.assert_tau3_customer(server.requests)


def test_a_row_of_one_benchmark_is_refused_by_an_env_of_the_other(tau3):
    from airline_gym.errors import ConfigError

    for row_version, env_version in (("tau3", "tau2"), ("tau2", "tau3")):
        env = make_environment_factory(user="scripted", benchmark=env_version)()
        (row,) = dataset_rows(task_ids=["7"], benchmark=row_version)
        with pytest.raises(ConfigError, match=f"listed for benchmark '{row_version}' but the env"):
            env.reset(**row)
        assert env.env.episode is None  # nothing was played
    env.reset(**{k: v for k, v in row.items() if k != "benchmark"})  # a row that does not say
    assert env.task_id == "7" and env.env.benchmark == "tau3"


def test_a_bad_benchmark_is_refused_as_the_env_refuses_it():
    from airline_gym.errors import ConfigError

    with pytest.raises(ConfigError) as from_env:
        AirlineEnv(user="scripted", benchmark="tau4")
    calls = [
        lambda: make_environment_factory(benchmark="tau4"),  # at once, not in every rollout
        lambda: dataset_rows(task_ids=["7"], benchmark="tau4"),
        lambda: AirlineToolEnv(user="scripted").reset(task_id="7", benchmark="tau4"),
    ]
    for call in calls:
        with pytest.raises(ConfigError) as refused:
            call()
        assert str(refused.value) == str(from_env.value)
        assert str(refused.value) == "benchmark must be one of tau2, tau3; got 'tau4'"
    with pytest.raises(ConfigError, match="task set 'tau2' belongs to benchmark 'tau2'"):
        make_environment_factory(benchmark="tau3", tasks="tau2")
