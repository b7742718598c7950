"""``eval --agent package.module:factory``: your own agent from the command line, loaded from a
module on PYTHONPATH and played on real episodes; a bad factory name is one line, exit 2."""

from __future__ import annotations

import json
import os
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from cli_runner import cli, one_line_error

FACTORIES = '''
import json, os
from airline_gym.agents import GoldAgent, NoOpAgent

SEEN = os.environ["SEEN_FILE"]


def gold(seed, task_set):
    """A seeded factory: the gold agent of the run's task set (records each seed)."""
    with open(SEEN, "a") as f:
        f.write(json.dumps(seed) + "\\n")
    return GoldAgent(task_set)


class Quitter(NoOpAgent):
    """A class taking no arguments: it stops at once."""


class Agents:
    @staticmethod
    def create(**kwargs):
        assert sorted(kwargs) == ["seed", "task_set"]
        return NoOpAgent()


NOT_CALLABLE = 3


def not_an_agent(seed):
    return 42


def broken(seed):
    raise RuntimeError("no model today")
'''


@pytest.fixture
def pythonpath(tmp_path: Path) -> dict[str, str]:
    """A folder holding ``my_agents.py`` (the factories above) on PYTHONPATH."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "my_agents.py").write_text(textwrap.dedent(FACTORIES))
    (folder / "bad_import.py").write_text("import no_such_module_anywhere\n")
    paths = [str(folder), os.environ.get("PYTHONPATH", "")]
    return {
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "SEEN_FILE": str(tmp_path / "seen"),
    }


def test_a_factory_on_pythonpath_plays_real_episodes(tmp_path: Path, pythonpath) -> None:
    out = tmp_path / "gold.json"
    args = ["eval", "--agent", "my_agents:gold", "--task-ids", "0", "3", "--trials", "2"]
    done = cli(*args, "--out", out, env=pythonpath, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    sims = results["simulations"]
    assert len(sims) == 4 and all(s["reward_info"]["reward"] == 1.0 for s in sims)
    assert results["info"]["agent_info"]["implementation"] == "GoldAgent"
    seen = [json.loads(line) for line in Path(pythonpath["SEEN_FILE"]).read_text().splitlines()]
    # called once per episode with the episode's seed (and up front with the run's base seed)
    per_episode = Counter(s["seed"] for s in sims)
    assert len(per_episode) == 4 and not per_episode - Counter(seen)
    assert set((Counter(seen) - per_episode).elements()) == {300}


@pytest.mark.parametrize("spec", ["my_agents:Quitter", "my_agents:Agents.create"])
def test_a_class_or_a_keyword_factory_is_called_with_what_it_accepts(
    spec: str, tmp_path: Path, pythonpath
) -> None:
    out = tmp_path / "r.json"
    done = cli("eval", "--agent", spec, "--task-ids", "2", "--out", out, env=pythonpath)
    assert done.returncode == 0, done.stderr
    [sim] = json.loads(out.read_text())["simulations"]
    assert sim["termination_reason"] == "agent_stop" and sim["reward_info"]["reward"] == 0.0


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("my_agents", "invalid choice: 'my_agents'"),
        (":gold", "give package.module:factory (both parts)"),
        ("my_agents:", "give package.module:factory (both parts)"),
        ("nowhere_to_be_found:make", "cannot import 'nowhere_to_be_found'"),
        ("bad_import:make", "importing 'bad_import' failed: ModuleNotFoundError"),
        ("my_agents:missing", "module 'my_agents' has no attribute 'missing'"),
        ("my_agents:NOT_CALLABLE", "'NOT_CALLABLE' is a int, not a callable factory"),
        ("my_agents:not_an_agent", "the factory returned a int, not an agent"),
        ("my_agents:broken", "the factory failed: RuntimeError: no model today"),
    ],
)
def test_a_bad_factory_is_one_line_and_exit_2(
    spec: str, says: str, tmp_path: Path, pythonpath
) -> None:
    out = tmp_path / "r.json"
    line = one_line_error(cli("eval", "--agent", spec, "--out", out, env=pythonpath))
    assert says in line, line
    assert not list(tmp_path.glob("r.json*"))


FLAKY = """
from airline_gym.agents import NoOpAgent

calls = 0


def make(seed):
    # tried up front, then once for the run's record, then per episode: fails on the second
    global calls
    calls += 1
    if calls > 3:
        raise RuntimeError("out of GPUs")
    return NoOpAgent()
"""


def test_a_factory_failing_during_the_run_is_a_failed_run_and_keeps_what_played(
    tmp_path: Path,
) -> None:
    (tmp_path / "flaky.py").write_text(FLAKY)
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    }
    out = tmp_path / "r.json"
    done = cli("eval", "--agent", "flaky:make", "--task-ids", "0", "1", "--out", out, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    line = done.stderr.strip().splitlines()[-1]  # after the progress lines
    assert line == (
        "airline-gym eval: error: --agent 'flaky:make': the factory failed: RuntimeError: "
        "out of GPUs"
    )
    journal = out.with_name("r.json.journal").read_text().splitlines()
    assert '"task_id": "0"' in "".join(journal) and '"task_id": "1"' not in "".join(journal)
