"""The Gymnasium contract of the airline envs."""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import airline_gym  # noqa: F401
from airline_gym.agents import DONE, GoldAgent, text_message, tool_call_message
from airline_gym.env import AirlineEnv
from airline_gym.env.registration import ENV_SPECS

ENVS_DIR = Path(__file__).resolve().parents[2] / "envs"
OFFLINE_IDS = [i for i, s in ENV_SPECS.items() if not s["nondeterministic"]]


def run_agent(env, agent, seed=0, options=None):
    obs, info = env.reset(seed=seed, options=options)
    agent.reset(info)
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        if terminated or truncated:
            return reward, terminated, truncated, info


# --- registration --------------------------------------------------------------------------------
def test_registry_and_envs_folder_agree_both_ways():
    files = {p.stem: json.loads(p.read_text()) for p in ENVS_DIR.glob("*.json")}
    ours = {s.id for s in gym.registry.values() if s.entry_point == "airline_gym.env:AirlineEnv"}
    assert set(files) == ours == set(ENV_SPECS)
    for env_id, data in files.items():
        assert json.loads(gym.spec(env_id).to_json()) == data


def test_make_with_module_prefix_works_in_a_fresh_interpreter():
    import subprocess
    import sys

    code = (
        "import gymnasium as gym; env = gym.make('airline_gym:AirlineScripted-v0', task=17); "
        "obs, info = env.reset(seed=1); print(info['task_id'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "17"


# --- gold replay ---------------------------------------------------------------------------
@pytest.mark.parametrize("task_set", ["tau2", "tau3"])
def test_gold_agent_scores_1_on_every_task(task_set, tau3_tasks):
    tasks = "tau2" if task_set == "tau2" else str(airline_gym_tau3_path())
    env = gym.make("Airline-v0", user="scripted", tasks=tasks)
    agent = GoldAgent(env.unwrapped.task_set)
    for task in env.unwrapped.task_set:
        reward, terminated, truncated, info = run_agent(env, agent, options={"task": task.id})
        assert (reward, terminated, truncated) == (1.0, True, False), (
            task.id,
            info.get("reward_info"),
        )
        # a customer playing an intent hangs up once its question is answered
        assert info["termination_reason"] in ("agent_stop", "user_stop")


def airline_gym_tau3_path():
    from tests.conftest import TAU3_TASKS

    return TAU3_TASKS


# --- the gymnasium checker, determinism, pickling ------------------------------------------------
@pytest.mark.parametrize("env_id", OFFLINE_IDS)
def test_check_env_passes_without_warnings(env_id):
    env = gym.make(env_id, task=17)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


@pytest.mark.parametrize("env_id", OFFLINE_IDS)
def test_seeded_rollouts_are_identical(env_id):
    def rollout():
        env = gym.make(env_id)  # task drawn from the env's RNG
        env.action_space.seed(7)
        obs, info = env.reset(seed=123)
        trace = [obs, info["task_id"]]
        for _ in range(30):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            trace.append((obs, reward, terminated, truncated, info["step_count"]))
            if terminated or truncated:
                break
        return trace, env.render() if env.render_mode else info["messages"]

    assert rollout() == rollout()


@pytest.mark.parametrize("env_id", OFFLINE_IDS)
def test_pickle_round_trip_mid_episode_continues_identically(env_id):
    env = gym.make(env_id, task=17)
    env.reset(seed=5)
    env.step(tool_call_message("get_user_details", {"user_id": "omar_rossi_1241"}, "a"))
    clone = pickle.loads(pickle.dumps(env))
    action = text_message("Which reservation would you like to change?")
    assert env.step(action)[:4] == clone.step(action)[:4]
    assert env.unwrapped.episode.db.hash() == clone.unwrapped.episode.db.hash()


# --- termination, rewards, info ----------------------------------------------------------------
def test_done_ends_with_agent_stop_and_stepping_again_is_refused():
    env = gym.make("AirlineScripted-v0", task=3)  # must say "4"; the greeting does not
    env.reset(seed=0)
    _obs, reward, terminated, truncated, info = env.step(DONE)
    assert (terminated, truncated, info["termination_reason"]) == (True, False, "agent_stop")
    assert reward == 0.0 and info["reward_info"]["communicate_checks"][0]["met"] is False
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\)"):
        env.step(DONE)  # Gymnasium's convention (issue 27.36)


def test_user_stop_terminates_and_grades():
    # a no-write task; the keyword customer (the intent customer would restate its request)
    env = gym.make("AirlineScripted-v0", task=1, user_kwargs={"intents": False})
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(
        "Your request is handled. Is there anything else I can help you with?"
    )
    assert "###STOP###" in obs[0]["content"]
    assert (terminated, truncated, info["termination_reason"]) == (True, False, "user_stop")
    assert info["reward_info"]["reward"] == reward


def test_info_carries_history_tools_prompt_and_counts():
    env = gym.make("AirlineScripted-v0", task=17)
    obs, info = env.reset(seed=0)
    assert info["task_id"] == "17" and info["step_count"] == 1 and info["num_errors"] == 0
    assert info["messages"][0] == {"role": "system", "content": info["system_prompt"]}
    assert (
        info["system_prompt"].startswith("<instructions>\n") and "<policy>" in info["system_prompt"]
    )
    assert info["messages"][1] == {"role": "assistant", "content": "Hi! How can I help you today?"}
    assert info["messages"][2] == obs[0]
    names = [t["function"]["name"] for t in info["tools"]]
    assert names[-1] == "done" and len(names) == 15


def test_partial_reward_and_error_penalty_are_opt_in():
    half = [
        tool_call_message(
            "update_reservation_passengers",
            {
                "reservation_id": "FQ8APE",
                "passengers": [{"first_name": "Omar", "last_name": "Rossi", "dob": "1970-06-06"}],
            },
            "p",
        )
    ]
    rewards = {}
    for mode in ("official", "partial"):
        env = gym.make("AirlineScripted-v0", task=17, reward=mode)
        env.reset(seed=0)
        env.step(half[0])
        rewards[mode] = env.step(DONE)[1]
    assert rewards["official"] == 0.0 and 0.0 < rewards["partial"] < 1.0
    env = gym.make("AirlineScripted-v0", task=17, error_penalty=0.1)
    env.reset(seed=0)
    assert env.step(tool_call_message("nope", {}, "n"))[1] == pytest.approx(-0.1)


def test_llm_user_without_credentials_fails_at_reset_with_advice(monkeypatch):
    for var in ("OPENAI_API_KEY", "AIRLINE_GYM_USER_MODEL"):
        monkeypatch.delenv(var, raising=False)
    env = gym.make("Airline-v0", task=17)
    with pytest.raises(Exception, match="OPENAI_API_KEY") as err:
        env.reset(seed=0)
    assert 'user="scripted"' in str(err.value)


def test_render_ansi_shows_the_transcript():
    env = gym.make("AirlineScripted-v0", task=17, render_mode="ansi")
    env.reset(seed=0)
    env.step(tool_call_message("get_user_details", {"user_id": "omar_rossi_1241"}, "r"))
    text = env.render()
    assert "assistant: Hi! How can I help you today?" in text
    assert 'assistant: -> get_user_details(user_id="omar_rossi_1241")' in text
    assert "tool:" in text and "\033[" not in text


def test_render_without_a_render_mode_warns_and_returns_none():
    """Gymnasium's contract: render() of an env made without render_mode returns None."""
    env = AirlineEnv(task=17, user="scripted")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match='render_mode="ansi"'):
        assert env.render() is None


def test_bad_constructor_arguments_are_clear():
    with pytest.raises(KeyError, match="no task '99'"):
        gym.make("AirlineScripted-v0", task=99)
    with pytest.raises(ValueError, match="Invalid task split name"):
        gym.make("AirlineScripted-v0", split="validation")
    with pytest.raises(ValueError, match="reward must be one of"):
        gym.make("AirlineScripted-v0", reward="dense")


def test_generated_call_ids_never_loop_or_collide_with_given_ones():
    from airline_gym.env.actions import parse_action

    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "call_0", "function": {"name": "calculate", "arguments": "{}"}},
            {"function": {"name": "calculate", "arguments": "{}"}},
            {"id": "call_1", "function": {"name": "calculate", "arguments": "{}"}},
        ],
    }
    ids = [c.id for c in parse_action(message, lambda: "call_0").tool_calls]  # a stuck generator
    assert len(set(ids)) == 3 and ids[0] == "call_0" and ids[2] == "call_1"
    assert gym.make("AirlineScripted-v0").action_space.contains(message)


def test_reset_refuses_an_unknown_option_and_keeps_the_episode():
    """A typo in reset's options is a clear error, not a silently random task."""
    import airline_gym.errors

    env = gym.make("AirlineScripted-v0", task="3").unwrapped
    env.reset(seed=0)
    before = env.episode
    with pytest.raises(airline_gym.errors.ConfigError, match=r"unknown reset option.*taks"):
        env.reset(seed=1, options={"taks": "5"})
    assert env.episode is before and before.task.id == "3"
    _, info = env.reset(seed=1, options={"task": "5"})
    assert info["task_id"] == "5"
