"""Benchmark versions: tau3's tasks and customer guidelines as one unit, recognised by content."""

from __future__ import annotations

import json

import pytest

from airline_gym.domain import benchmarks
from airline_gym.domain.benchmarks import (
    benchmark_tasks,
    check_benchmark,
    recognise,
    task_digest,
    version_of,
)
from airline_gym.domain.prompts import user_system_prompt
from airline_gym.domain.tasks import load_task_set
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.errors import ConfigError
from airline_gym.users import LLMUser
from tests.conftest import SHARED, TAU3_GUIDELINES, TAU3_TASKS

pytestmark = pytest.mark.usefixtures("tau3")
T3NEW = SHARED / "trajectories" / "t3new__sierra-pr448__whissle__user-gpt-4o.json"
T2OLD = SHARED / "trajectories" / "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json"


def test_the_stored_digests_are_those_of_the_tau3_file() -> None:
    raw = json.loads(TAU3_TASKS.read_text())
    assert {task_digest(t) for t in raw} == benchmarks._TAU3_DIGESTS


def test_load_task_set_tau3_is_the_tau3_file_with_tau2_splits() -> None:
    tau3, tau2 = load_task_set("tau3"), load_task_set("tau2")
    assert [t.raw for t in tau3] == json.loads(TAU3_TASKS.read_text())
    assert tau3.name == "tau3" and dict(tau3.splits) == dict(tau2.splits)


@pytest.mark.parametrize(("path", "version"), [(T3NEW, "tau3"), (T2OLD, "tau2")])
def test_results_files_are_recognised_by_their_tasks(path, version) -> None:
    embedded = json.loads(path.read_text())["tasks"]  # dumped with extra keys by tau2-bench
    assert recognise(embedded) == version
    other = "tau2" if version == "tau3" else "tau3"
    how = f"recognised from the file's tasks, not --benchmark {other}"
    assert version_of({}, embedded, given=other) == (version, how)


def test_tasks_the_versions_share_tell_nothing() -> None:
    tau2, tau3 = load_task_set("tau2"), load_task_set("tau3")
    same = [t.raw for t in tau3 if task_digest(t.raw) == task_digest(tau2.tasks[t.id].raw)]
    assert len(same) == 21  # spec 9.4: 29 of 50 differ (tau3 adds reward_basis to every one)
    assert recognise(same) is None
    assert recognise([tau3.tasks["7"].raw]) == "tau3"
    assert recognise([tau2.tasks["7"].raw]) == "tau2"
    assert recognise([tau2.tasks["7"].raw, tau3.tasks["9"].raw]) is None  # mixed
    assert version_of({"benchmark": "tau3"}, same) == ("tau3", "recorded in the file's info")
    assert version_of(None, same, "tau3") == (
        "tau3",
        "as --benchmark says (the file does not tell)",
    )
    assert version_of(None, None) == ("tau2", "the default (the file does not tell)")


def test_a_version_is_one_unit() -> None:
    assert benchmark_tasks(None, "tau3") == "tau3"
    assert benchmark_tasks("my/tasks.json", "tau3") == "my/tasks.json"
    with pytest.raises(ConfigError, match="'tau2' belongs to benchmark 'tau2', not 'tau3'"):
        benchmark_tasks("tau2", "tau3")
    with pytest.raises(ConfigError, match="benchmark must be one of tau2, tau3; got 'tau4'"):
        check_benchmark("tau4")
    with pytest.raises(ConfigError, match="'tau3' belongs to benchmark 'tau3'"):
        AirlineEnv(tasks="tau3", user="scripted")


def test_the_customer_reads_the_version_s_guidelines() -> None:
    tau2_task = load_task_set("tau2")["12"]
    tau3_task = load_task_set("tau3")["12"]  # reason_for_call changed (spec 9.4)
    old = user_system_prompt(tau2_task)
    new = user_system_prompt(tau3_task, benchmark="tau3")
    guidelines = TAU3_GUIDELINES.read_text()
    assert new.startswith(guidelines + "\n\n<scenario>\n") and not old.startswith(guidelines)
    # the guidelines differ by whitespace only (spec 13.12b)
    assert old.split("<scenario>")[0].split() == new.split("<scenario>")[0].split()
    env = AirlineEnv(task="12", benchmark="tau3", user="llm", user_model="openai/x")
    assert isinstance(env.user, LLMUser) and env.user.benchmark == "tau3"
    env.user.reset(env.task_set["12"])
    assert env.user.messages([])[0]["content"] == new
    with pytest.raises(ConfigError, match="speaks benchmark 'tau2'"):
        AirlineEnv(task="12", benchmark="tau3", user=LLMUser("openai/x"))


def test_gym_make_takes_the_version() -> None:
    import gymnasium as gym

    from airline_gym.agents import builtin_agent
    from airline_gym.harness.runner import run_episode

    env = gym.make("AirlineScripted-v0", task=7, benchmark="tau3")
    assert env.unwrapped.task_set.name == "tau3" and env.unwrapped.benchmark == "tau3"
    gold = builtin_agent("gold", env.unwrapped.task_set, 0)
    assert run_episode(env, gold, "7", seed=0).reward == 1.0  # tau3's task 7 (business cabin)
    tau2_gold = builtin_agent("gold", load_task_set("tau2"), 0)
    assert run_episode(env, tau2_gold, "7", seed=0).reward == 0.0  # tau2's gold: economy
