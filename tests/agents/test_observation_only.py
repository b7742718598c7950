"""The audit's agents see only what the env gives an agent.

- Their modules never import the task, its gold or intent, the task file or the DB loader (read
  with ``ast``, imports inside functions included).
- They are built without a task set.
- They score exactly the same when ``info`` holds nothing but ``messages``, ``tools`` and
  ``protocol`` (no task id to look anything up by).
- None of them raises or runs out of steps on generated tasks.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from airline_gym.agents.policy.roster import EXPLOITS, WORDINGS, make_agent
from airline_gym.env.airline_env import AirlineEnv
from airline_gym.harness.runner import run_episode
from tests.cli_runner import run_cli

sys.path.insert(0, str(Path(__file__).parents[1] / "taskgen"))
from taskgen_files import generated_file

pytestmark = pytest.mark.usefixtures("tau3_for_module")

POLICY_AGENTS = Path(__file__).parents[2] / "airline_gym" / "agents" / "policy"
#: Modules that hold or load a task, its gold or intent, the task file or the DB files.
FORBIDDEN_MODULES = (
    "airline_gym.domain.tasks",
    "airline_gym.domain.benchmarks",
    "airline_gym.data",
    "airline_gym.users",  # the customer (its intent, the gold writes it was told)
    "airline_gym.taskgen.generate",
    "airline_gym.taskgen.assemble",
    "airline_gym.taskgen.bins",
    "airline_gym.taskgen.pools",
    "airline_gym.taskgen.proposals",
    "airline_gym.taskgen.instructions",
    "airline_gym.taskgen.benchmark_intents",
    "airline_gym.taskgen.output",
    "airline_gym.env",
    "airline_gym.harness",
)
#: Allowed under a forbidden prefix: the customer's phrase functions (its wording, which the
#: agent reads back), and the ``done`` tool's name and the protocols' names.
ALLOWED = (
    "airline_gym.users.intent_words",
    "airline_gym.users.intent_persona",  # a persona's words (a several-at-once opening's mark)
    "airline_gym.env.actions",
    "airline_gym.env.protocols",
)
#: Names that load a task, a task file, an intent from a task, or the DB.
FORBIDDEN_NAMES = frozenset(
    {"load_pristine", "load_task_set", "task_intent", "granted_writes", "customer_for", "Task"}
)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return found


def _names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return names


@pytest.mark.parametrize("path", sorted(POLICY_AGENTS.glob("*.py")), ids=lambda p: p.name)
def test_the_agents_modules_never_import_the_task_or_the_db_loader(path: Path) -> None:
    for module in _imports(path):
        if module.startswith(ALLOWED):
            continue
        assert not module.startswith(FORBIDDEN_MODULES), f"{path.name} imports {module}"
    assert not FORBIDDEN_NAMES & _names(path), f"{path.name} uses {FORBIDDEN_NAMES & _names(path)}"


def test_the_ast_check_finds_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from airline_gym.domain.tasks import load_task_set\n")
    assert "airline_gym.domain.tasks" in _imports(bad) and "load_task_set" in _names(bad)


@pytest.mark.parametrize("name", [*WORDINGS, *EXPLOITS])
def test_each_agent_is_built_without_a_task_set(name: str) -> None:
    agent = make_agent(name)
    assert not [
        p for p in inspect.signature(type(agent)).parameters.values() if p.default is p.empty
    ]


class _Blinkered:
    """Passes an agent only ``messages``, ``tools`` and ``protocol`` of each ``info``."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    @staticmethod
    def _only(info: dict[str, Any]) -> dict[str, Any]:
        return {k: info[k] for k in ("messages", "tools", "protocol") if k in info}

    def reset(self, info: dict[str, Any]) -> None:
        self.agent.reset(self._only(info))

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Any:
        return self.agent.act(observation, self._only(info))


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated_file(tmp_path_factory.mktemp("observing"), 60, 23)


def _play(tasks: Path, agent: Any, protocol: str = "gym") -> dict[str, Any]:
    from airline_gym.domain.tasks import load_task_set

    env = AirlineEnv(tasks=str(tasks), user="scripted", protocol=protocol)
    return {t.id: run_episode(env, agent, t.id, seed=0) for t in load_task_set(str(tasks))}


def test_the_policy_agent_scores_the_same_with_nothing_but_the_messages(tasks: Path) -> None:
    full = _play(tasks, make_agent("policy"))
    blind = _play(tasks, _Blinkered(make_agent("policy")))
    assert {t: r.reward for t, r in blind.items()} == {t: r.reward for t, r in full.items()}
    assert [r.messages for r in blind.values()] == [r.messages for r in full.values()]
    assert sum(r.reward for r in full.values()) >= 0.95 * len(full)


@pytest.mark.parametrize("name", [*WORDINGS, *EXPLOITS])
def test_no_agent_fails_or_runs_out_of_steps(tasks: Path, name: str) -> None:
    results = _play(tasks, make_agent(name))
    ended = {r.termination_reason for r in results.values()}
    assert ended <= {"user_stop", "agent_stop"}, {
        t: (r.termination_reason, r.error) for t, r in results.items() if r.error
    }


@pytest.mark.parametrize("protocol", ["leaderboard", "tool-reply"])
@pytest.mark.parametrize("name", ["policy", "bare-confirm", "hidden-figure", "bail-processed"])
def test_every_protocol_grades_an_agent_as_gym_does(tasks: Path, protocol: str, name: str) -> None:
    """Under ``tool-reply`` the agents talk through ``respond_to_user`` (a plain reply would end
    the episode unplayed), and strict grading reads those calls as what the customer saw: the
    policy agent passes what it passes under ``gym`` and the exploits earn no more."""
    gym = {t: r.reward for t, r in _play(tasks, make_agent(name)).items()}
    other = _play(tasks, make_agent(name), protocol)
    assert {t: r.reward for t, r in other.items()} == gym
    assert {r.termination_reason for r in other.values()} <= {"user_stop", "agent_stop"}


def test_eval_plays_the_policy_agent_by_name(tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = run_cli("eval", "--agent", "policy", "--tasks", str(tasks), "--out", str(out))
    assert done.returncode == 0, done.stderr
    rewards = {
        s["task_id"]: s["reward_info"]["reward"] for s in json.loads(out.read_text())["simulations"]
    }
    alone = _play(tasks, make_agent("policy"))
    assert rewards == {t: r.reward for t, r in alone.items()}
