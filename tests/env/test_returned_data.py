"""Returned objects never alias internal state (issue 11.3).

Whatever a caller does to what ``reset``/``step``/``grade``/``evaluate`` return, the env, the
task cache, the gold-DB cache, the tool schemas and the pristine DB stay as they were.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airline_gym.agents import GoldAgent, NoOpAgent
from airline_gym.domain.database import PRISTINE_DB_HASH, load_pristine
from airline_gym.domain.grading import grade
from airline_gym.domain.tasks import load_task_set
from airline_gym.env import AirlineEnv
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.runner import run_episodes
from airline_gym.testing.soak import full_pristine_hash

DONE = {"name": "done", "arguments": {}}


def _gold_reward(task_id: str) -> float:
    """A fresh env's gold episode on ``task_id``."""
    [result] = run_episodes(lambda: AirlineEnv(user="scripted"), GoldAgent, [(task_id, 0)])
    return result.reward


def _noop_reward(task_id: str) -> float:
    [result] = run_episodes(lambda: AirlineEnv(user="scripted"), NoOpAgent, [(task_id, 0)])
    return result.reward


def test_rewriting_an_observation_does_not_change_the_reward() -> None:
    # task 3 needs no DB change but must say "4": a do-nothing episode scores 0
    env = AirlineEnv(task=3, user="scripted")
    obs, _ = env.reset(seed=0)
    obs[0]["role"], obs[0]["content"] = "assistant", "4"
    *_, info = env.step({"role": "assistant", "content": "Let me check."})
    for message in info["messages"]:
        message["role"], message["content"] = "assistant", "4"
    obs, reward, terminated, _, info = env.step(DONE)
    assert terminated and reward == 0.0
    assert info["reward_info"]["communicate_checks"][0]["met"] is False
    assert [m["content"] for m in info["messages"]].count("4") == 0


def test_info_messages_are_fresh_copies_each_step() -> None:
    env = AirlineEnv(task=17, user="scripted")
    _, info = env.reset(seed=0)
    first_user = info["messages"][2]["content"]
    info["messages"][2]["content"] = "edited"
    _, _, _, _, info = env.step(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_user_details", "arguments": "{}"},
                }
            ],
        }
    )
    assert info["messages"][2]["content"] == first_user
    info["messages"][3]["tool_calls"][0]["function"]["name"] = "renamed"
    _, _, _, _, info = env.step({"role": "assistant", "content": "ok"})
    assert info["messages"][3]["tool_calls"][0]["function"]["name"] == "get_user_details"
    assert env.episode is not None
    assert env.episode.messages[2]["tool_calls"][0]["function"]["name"] == "get_user_details"


def test_editing_db_diff_values_leaves_the_gold_cache_and_pristine_db_alone() -> None:
    tasks = load_task_set()
    base = load_pristine()
    g = grade(tasks["17"], base.fork(), [], "agent_stop")  # nothing done: the DB differs
    assert g.db_diff
    for diff in g.db_diff:
        for value in (diff.expected, diff.got):
            if isinstance(value, dict):
                value.clear()
            elif isinstance(value, list):
                value.append("junk")
    assert full_pristine_hash(base) == PRISTINE_DB_HASH
    assert _gold_reward("17") == 1.0


def test_results_tasks_are_copies_of_the_task_cache() -> None:
    results = evaluate("noop", EvalConfig(task_ids=["17"]))
    for record in results.tasks:
        record["evaluation_criteria"]["actions"].clear()
    assert load_task_set()["17"].actions  # the cache still has the gold actions
    assert _noop_reward("17") == 0.0
    assert _gold_reward("17") == 1.0


def test_info_tools_are_a_private_copy() -> None:
    env = AirlineEnv(task=17, user="scripted")
    _, info = env.reset(seed=0)
    names = [t["function"]["name"] for t in info["tools"]]
    for tool in info["tools"]:
        tool["function"]["name"] = "renamed"
        tool["function"]["parameters"]["properties"].clear()
    other = AirlineEnv(task=17, user="scripted")
    _, fresh = other.reset(seed=0)
    assert [t["function"]["name"] for t in fresh["tools"]] == names
    other.action_space.seed(0)
    sampled = {
        c["function"]["name"]
        for _ in range(50)
        for c in other.action_space.sample().get("tool_calls") or ()
    }
    assert sampled and sampled <= set(names)
    _, again = env.reset(seed=1)  # the same env's next episode is unaffected too
    assert [t["function"]["name"] for t in again["tools"]] == names


# --- the property: mutate everything that is returned ------------------------------------------

_JUNK = st.one_of(
    st.none(), st.integers(-3, 3), st.text(max_size=3), st.builds(list), st.builds(dict)
)


def _containers(value: Any, out: list[Any], depth: int = 0) -> list[Any]:
    """Every dict and list reachable from ``value`` (dataclasses through their fields)."""
    if depth > 12:
        return out
    if hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            _containers(getattr(value, name), out, depth + 1)
    elif isinstance(value, dict):
        out.append(value)
        for v in list(value.values()):
            _containers(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        if isinstance(value, list):
            out.append(value)
        for v in list(value):
            _containers(v, out, depth + 1)
    return out


def _mutate(containers: list[Any], data: st.DataObject) -> None:
    for target in containers:
        action = data.draw(st.sampled_from(["set", "clear", "delete", "append", "keep"]))
        if action == "keep":
            continue
        if action == "clear":
            target.clear()
        elif isinstance(target, dict) and target:
            key = data.draw(st.sampled_from(sorted(target, key=str)))
            if action == "delete":
                del target[key]
            else:
                target[key] = data.draw(_JUNK)
        elif isinstance(target, list):
            if action == "append" or not target:
                target.append(data.draw(_JUNK))
            else:
                target[data.draw(st.integers(0, len(target) - 1))] = data.draw(_JUNK)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(task_id=st.sampled_from(["3", "17", "5"]), data=st.data())
def test_mutating_everything_returned_changes_nothing(task_id: str, data: st.DataObject) -> None:
    env = AirlineEnv(task=task_id, user="scripted")
    returned: list[Any] = list(env.reset(seed=0))
    agent = GoldAgent()
    agent.reset(returned[1])
    while True:
        step = env.step(agent.act(returned[0], returned[1]))
        returned.extend([step[0], step[4]])
        returned[0], returned[1] = step[0], step[4]
        if step[2] or step[3]:
            break
        _mutate(_containers(step[0], []) + _containers(step[4], []), data)
    assert env.episode is not None
    returned.append(env.episode.grade())
    returned.append(grade(env.task_set[task_id], env.episode.db, [], "agent_stop"))
    returned.append(evaluate("gold", EvalConfig(task_ids=[task_id])))
    _mutate(_containers(returned, []), data)
    assert full_pristine_hash(load_pristine()) == PRISTINE_DB_HASH
    assert _gold_reward(task_id) == 1.0
    assert _gold_reward("17") == 1.0


def test_editing_one_envs_tools_never_reaches_another_env() -> None:
    """info["tools"] is each episode's own: an edit mid-episode is invisible to a live twin."""
    import gymnasium as gym

    first, second = gym.make("AirlineScripted-v0"), gym.make("AirlineScripted-v0")
    _, info_a = first.reset(seed=1)
    _, info_b = second.reset(seed=2)
    info_a["tools"][0]["function"]["name"] = "renamed"
    info_a["tools"][0]["function"]["parameters"]["properties"].clear()
    assert info_b["tools"][0]["function"]["name"] == "book_reservation"
    _, info_c = second.reset(seed=3)
    assert info_c["tools"][0]["function"]["name"] == "book_reservation"
    assert info_c["tools"][0]["function"]["parameters"]["properties"]
    assert first.unwrapped.tools[0]["function"]["name"] == "book_reservation"
