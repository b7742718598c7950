"""``eval --resume`` refuses other sampling settings (a real LLM agent on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import cli, one_line_error

from airline_gym.cli.main import main
from airline_gym.harness.results import Results
from airline_gym.testing import OpenAIServer, Reply

CUSTOMER = [Reply("Hi, I'm omar_rossi_1241."), Reply("Thanks! ###STOP###")]


def _eval(agent_url: str, user_url: str, out: Path, *extra: str) -> list[str]:
    argv = ["eval", "--agent-model", "openai/agent", "--api-base", agent_url, "--task-ids", "17"]
    argv += ["--user-model", "openai/customer", "--user-api-base", user_url]
    return [*argv, "--max-steps", "4", "--out", str(out), *extra]


@pytest.mark.parametrize(
    ("first", "then", "says"),
    [
        ([], ["--temperature", "0.5"], "the agent's temperature 0.0, this run has 0.5"),
        (["--max-tokens", "64"], ["--max-tokens", "65"], "the agent's max_tokens 64, this run"),
        ([], ["--llm-args", '{"top_p": 0.9}'], "the agent's top_p unset, this run has 0.9"),
        (["--timeout", "30"], [], "the agent's timeout 30.0, this run has unset"),
        ([], ["--user-llm-args", '{"stop": ["x"]}'], "the customer's stop unset, this run"),
    ],
)
def test_resume_with_other_sampling_settings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: list[str], then: list[str], says: str
) -> None:
    out = tmp_path / "run.json"
    with (
        OpenAIServer(default=Reply("Anything else?")) as agent,
        OpenAIServer(CUSTOMER * 4) as users,
    ):
        assert main(_eval(agent.base_url, users.base_url, out, *first)) == 0
        before = out.read_bytes()
        capsys.readouterr()
        requests = len(agent.requests)
        code = main(_eval(agent.base_url, users.base_url, out, *then, "--trials", "2", "--resume"))
        assert code == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith(f"airline-gym eval: error: cannot resume {out}: it was run with ")
        assert says in error and "\n" not in error
        assert len(agent.requests) == requests and out.read_bytes() == before  # nothing ran
        # the same settings resume: the second trial is played and the file holds both
        assert (
            main(_eval(agent.base_url, users.base_url, out, *first, "--trials", "2", "--resume"))
            == 0
        )
    assert sorted(s["trial"] for s in Results.load(out).simulations) == [0, 1]


def _tasks_file(path: Path, sources: list[int]) -> None:
    """A tasks file with ids 0, 1, 2 whose content is tau2's tasks ``sources``."""
    from airline_gym.domain.tasks import load_task_set

    tau2 = load_task_set("tau2")
    path.write_text(
        json.dumps([{**tau2[s].raw, "id": str(i)} for i, s in enumerate(sources)]),
        encoding="utf-8",
    )


def test_resume_on_a_regenerated_tasks_file_is_refused(tmp_path: Path) -> None:
    """The tasks file was written again under the same name with the same ids but other tasks:
    resuming would mix two task sets in one results file (issue 35, 17)."""
    tasks, out = tmp_path / "T.json", tmp_path / "run.json"
    _tasks_file(tasks, [0, 1, 2])
    args = ("eval", "--agent", "noop", "--tasks", tasks, "--task-ids", "0,1,2", "--out", out)
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert len(Results.load(out).info["tasks_sha256"]) == 64
    before = out.read_bytes()
    _tasks_file(tasks, [3, 1, 4])  # the same ids; tasks 0 and 2 are other tasks now
    line = one_line_error(cli(*args, "--trials", "2", "--resume"))
    assert line.startswith(f"airline-gym eval: error: cannot resume {out}: the tasks in {tasks}")
    assert "2 of the run's 3 tasks differ (0, 2)" in line
    assert out.read_bytes() == before  # nothing ran, nothing was replaced
    assert not out.with_name("run.json.journal").exists()
    _tasks_file(tasks, [0, 1, 2])  # the tasks it was run on: it resumes
    done = cli(*args, "--trials", "2", "--resume")
    assert done.returncode == 0, done.stderr
    assert len(Results.load(out).simulations) == 6


def test_resume_of_a_file_without_the_tasks_hash_compares_the_embedded_tasks(
    tmp_path: Path,
) -> None:
    """A run written before the hash was recorded is checked against the tasks it embeds."""
    tasks, out = tmp_path / "T.json", tmp_path / "run.json"
    _tasks_file(tasks, [0, 1, 2])
    args = ("eval", "--agent", "noop", "--tasks", tasks, "--task-ids", "0,1", "--out", out)
    assert cli(*args).returncode == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    data["info"].pop("tasks_sha256", None)  # as a run written before it was recorded
    out.write_text(json.dumps(data), encoding="utf-8")
    _tasks_file(tasks, [0, 5, 2])
    line = one_line_error(cli(*args, "--trials", "2", "--resume"))
    assert "1 of the run's 2 tasks differ (1)" in line
    _tasks_file(tasks, [0, 1, 7])  # a task the run did not play changed: nothing is mixed
    assert cli(*args, "--trials", "2", "--resume").returncode == 0
