"""The stable-baselines3 bridge: spaces SB3 accepts, candidates that can solve task 17, and a
short PPO run that learns."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from extras import require

from airline_gym.integrations.sb3 import (
    PADDINGS,
    CandidateActionWrapper,
    ProgressReward,
    make_env,
)

require("stable_baselines3")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sb3_ppo.py"


def _index(env: CandidateActionWrapper, name: str, **arguments: object) -> int:
    """The slot of the candidate calling ``name`` with (at least) these arguments."""
    for i, candidate in enumerate(env.candidates):
        args = candidate.arguments
        if candidate.name == name and all(args.get(k) == v for k, v in arguments.items()):
            return i
    raise AssertionError(f"no candidate {name}({arguments}) in {[str(c) for c in env.candidates]}")


def _calls(env: CandidateActionWrapper) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, c.arguments) for c in map(env.decode, range(env.n)) if c is not None]


@pytest.mark.parametrize("padding", PADDINGS)
def test_check_env_passes_without_warnings(padding: str) -> None:
    from stable_baselines3.common.env_checker import check_env  # imports torch

    for env in (make_env(17, padding=padding), make_env(17, padding=padding, progress_reward=1.0)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env)


def test_candidates_hold_the_gold_actions_of_task_17_after_the_right_reads() -> None:
    env = make_env(17)
    assert isinstance(env, CandidateActionWrapper)
    gold = env.unwrapped.task_set["17"].actions  # type: ignore[attr-defined]
    flights, passengers, baggages = ((a.name, a.arguments) for a in gold)
    env.reset(seed=0)
    assert ("get_user_details", {"user_id": "omar_rossi_1241"}) in _calls(env)
    env.step(_index(env, "get_user_details", user_id="omar_rossi_1241"))
    env.step(_index(env, "get_reservation_details", reservation_id="FQ8APE"))
    assert flights in _calls(env)
    assert passengers in _calls(env)
    _, _, _, _, info = env.step(_calls(env).index(flights))
    assert info["action"].startswith("update_reservation_flights(")
    assert baggages in _calls(env)  # paid bags follow the new cabin's allowance
    env.step(_calls(env).index(passengers))
    env.step(_calls(env).index(baggages))
    _, reward, terminated, truncated, info = env.step(_index(env, "done"))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["reward_info"]["reward"] == 1.0


def test_progress_reward_pays_each_write_once_and_keeps_the_official_reward() -> None:
    env = make_env(17, progress_reward=1.0)
    assert isinstance(env, ProgressReward)
    wrapper = env.env
    assert isinstance(wrapper, CandidateActionWrapper)
    env.reset(seed=0)
    rewards = []
    for name, args in [
        ("get_user_details", {}),
        ("get_reservation_details", {"reservation_id": "FQ8APE"}),
        ("update_reservation_flights", {"cabin": "economy"}),
        ("update_reservation_flights", {"cabin": "basic_economy"}),  # harmful: not charged
        ("update_reservation_flights", {"cabin": "economy"}),  # back: no new progress
        ("done", {}),
    ]:
        rewards.append(env.step(_index(wrapper, name, **args))[1])
    assert rewards[:2] == [0.0, 0.0]
    assert 0 < rewards[2] < 1 and rewards[3:] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("padding", PADDINGS)
def test_no_index_ever_raises(padding: str) -> None:
    env = make_env(17, padding=padding, max_actions=12)
    space = env.observation_space
    rng = np.random.default_rng(0)
    for episode in range(env.action_space.n + 5):
        observation, _ = env.reset(seed=episode)
        done = False
        while not done:
            # a fixed index per episode first, then random ones
            index = episode if episode < env.action_space.n else int(rng.integers(env.n))
            if isinstance(env, CandidateActionWrapper):
                assert (env.decode(index) is None) == (
                    padding == "noop" and index >= len(env.candidates)
                )
            observation, reward, terminated, truncated, info = env.step(index)
            assert space.contains(observation)
            assert isinstance(reward, float)
            done = terminated or truncated
        with pytest.raises(gym.error.ResetNeeded):  # past the end: refused, as by the env
            env.step(0)


def _load_example():
    spec = importlib.util.spec_from_file_location("sb3_ppo_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_example(
    capsys: pytest.CaptureFixture[str], timesteps: int, eval_every: int
) -> tuple[float, float]:
    """(untrained, final) mean official reward of the example on seed 0, 20 eval episodes."""
    example = _load_example()
    args = {
        "--timesteps": timesteps,
        "--seed": 0,
        "--eval-episodes": 20,
        "--eval-every": eval_every,
    }
    final = example.main([str(part) for pair in args.items() for part in pair])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == f"mean_reward={final}"
    untrained = float(next(line for line in lines if "timesteps=      0" in line).split("=")[-1])
    return untrained, final


@pytest.mark.long
def test_short_ppo_run_improves_on_the_untrained_policy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    untrained, final = _run_example(capsys, 16_000, eval_every=16_000)
    # Measured on seed 0: untrained 0.0, 0.6 after 16,384 timesteps (about a third of the slow run).
    assert untrained <= 0.2
    assert final >= untrained + 0.3


@pytest.mark.slow
def test_reduced_ppo_example_learns(capsys: pytest.CaptureFixture[str]) -> None:
    untrained, final = _run_example(capsys, 40_000, eval_every=10_000)
    # Measured with this budget on seeds 0-7: untrained 0.0 each, trained 0.90-1.0 (~33 s).
    assert untrained <= 0.2
    assert final >= 0.6


def test_example_without_stable_baselines3_names_the_extra() -> None:
    """Without the library the example prints one line naming the extra, no traceback."""
    import subprocess
    import sys

    code = (
        "import runpy, sys; sys.modules['stable_baselines3'] = None; "
        f"sys.argv = ['sb3_ppo.py', '--timesteps', '10']; runpy.run_path({str(EXAMPLE)!r}, "
        "run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("pip install 'airline-gym[sb3]'")


def test_a_tau3_env_plays_tau3_s_task_and_a_bad_benchmark_is_refused(tau3) -> None:
    from airline_gym.domain.tasks import load_task_set
    from airline_gym.errors import ConfigError
    from airline_gym.integrations.sb3 import train_ppo

    env = make_env(task="7", benchmark="tau3")
    env.reset(seed=0)
    episode = env.unwrapped.episode
    assert env.unwrapped.benchmark == "tau3" and episode.task.id == "7"
    assert episode.task.raw == load_task_set("tau3")["7"].raw != load_task_set("tau2")["7"].raw
    with pytest.raises(ConfigError) as refused:
        train_ppo(task="7", timesteps=8, benchmark="tau4", log=None)
    assert str(refused.value) == "benchmark must be one of tau2, tau3; got 'tau4'"


def test_example_refuses_a_bad_benchmark_in_one_line() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--benchmark", "tau4"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "error: argument --benchmark: invalid choice: 'tau4'" in done.stderr
