"""``eval``'s exit code tells a failed run (issue 27, B8): when its failed simulations
(agent_error, user_error, infrastructure_error, a failed NL judge) reach ``--max-failures``
(default: every simulation) it exits 1 with one line, and the results file is kept."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from cli_runner import run_cli

from airline_gym.harness.results import Results
from airline_gym.testing.openai_server import OpenAIServer, Reply


def run(*args: str) -> tuple[int, str, str]:
    """``airline-gym ARGS`` in this process: (exit code, stdout, stderr)."""
    done = run_cli(*args)
    return done.returncode, done.stdout, done.stderr


def _refused_url() -> str:
    """A 127.0.0.1 URL nothing listens on (the port was just free)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _eval(url: str, out: Path, *more: str) -> tuple[int, str, str]:
    return run(
        "eval", "--agent-model", "openai/agent", "--api-base", url, "--api-key", "k",
        "--task-ids", "0,1", "--max-retries", "0", "--max-steps", "6", "--out", str(out), *more,
    )  # fmt: skip


def test_every_simulation_failing_is_a_failed_run(tmp_path: Path) -> None:
    out = tmp_path / "refused.json"
    code, stdout, err = _eval(_refused_url(), out)
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("airline-gym eval: error: the run failed: 2 of 2 simulations failed")
    assert "agent_error 2" in last and str(out) in last
    assert "results:" in stdout  # the summary is still printed ...
    assert len(Results.load(out).simulations) == 2  # ... and the file kept


def test_max_failures_sets_the_threshold(tmp_path: Path) -> None:
    # the first request fails (no retries), the second episode's agent answers
    with OpenAIServer([Reply(fault="500")], default=Reply("How can I help?")) as server:
        code, _, err = _eval(server.base_url, tmp_path / "one.json")
        assert code == 0, err  # 1 of 2 failed: below the default (every simulation)
        code, _, err = _eval(server.base_url, tmp_path / "two.json", "--max-failures", "1")
    # the second run's episodes were answered: none failed, so it does not fail
    assert code == 0, err
    with OpenAIServer([Reply(fault="500")], default=Reply("How can I help?")) as server:
        code, _, err = _eval(server.base_url, tmp_path / "three.json", "--max-failures", "1")
    assert code == 1 and "1 simulation failed (agent_error 1)" in err  # and the run stopped
    assert "--max-failures 1, so no more were started" in err.strip().splitlines()[-1]


def test_max_failures_stops_the_run_early_and_resume_retries_the_failures(tmp_path: Path) -> None:
    """Once N simulations failed no more are started (a paid run stops spending); the finished
    ones are saved, and --resume --retry-errors plays the failed and the unplayed ones."""
    out = tmp_path / "early.json"
    many = ("--task-ids", "0,1,2,3,4,5,6,7", "--concurrency", "1")
    code, stdout, err = _eval(_refused_url(), out, *many, "--max-failures", "2")
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("airline-gym eval: error: the run failed: 2 simulations failed")
    assert "(agent_error 2)" in last and "--max-failures 2, so no more were started" in last
    assert "2 of 8 simulations saved in" in last and "--resume --retry-errors" in last
    assert "results:" not in stdout  # no summary of a run that stopped early
    with OpenAIServer([], default=Reply("How can I help?")) as server:
        code, _, err = _eval(server.base_url, out, *many, "--resume", "--retry-errors")
    assert code == 0, err
    sims = Results.load(out).simulations
    assert sorted(s["task_id"] for s in sims) == [str(i) for i in range(8)]
    assert all(s["termination_reason"] != "agent_error" for s in sims)


def test_max_failures_reached_by_the_last_simulation_is_not_an_early_stop(tmp_path: Path) -> None:
    code, stdout, err = _eval(_refused_url(), tmp_path / "last.json", "--max-failures", "2")
    assert code == 1 and "results:" in stdout  # the whole run, summarised
    assert "2 of 2 simulations failed (agent_error 2), reaching --max-failures 2" in err


@pytest.mark.parametrize("limit", ["3", "7", str(10**30)])
def test_a_run_whose_every_simulation_failed_fails_whatever_the_limit(
    tmp_path: Path, limit: str
) -> None:
    """A limit above the run's size never turns a run with no graded simulation into a
    success (issue 35, 19)."""
    out = tmp_path / "all-failed.json"
    code, stdout, err = _eval(_refused_url(), out, "--max-failures", limit)
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("airline-gym eval: error: the run failed: 2 of 2 simulations failed")
    assert "every simulation failed" in last and str(out) in last
    assert "results:" in stdout and len(Results.load(out).simulations) == 2


def test_evaluate_refuses_a_bad_max_failures() -> None:
    from airline_gym.errors import ConfigError
    from airline_gym.harness.evaluate import evaluate

    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ConfigError, match="max_failures must be a whole number"):
            evaluate("noop", max_failures=bad)  # type: ignore[arg-type]


def test_a_bad_max_failures_is_bad_input(tmp_path: Path) -> None:
    code, _, err = _eval(_refused_url(), tmp_path / "x.json", "--max-failures", "0")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--max-failures" in err
    assert not (tmp_path / "x.json").exists()


def test_help_states_the_exit_code_rule() -> None:
    code, stdout, _ = run("eval", "--help")
    text = " ".join(stdout.split())
    assert code == 0
    assert "Exit code: 0 when the run finished; 1 when it failed" in text
    assert "2 on bad input" in text and "--max-failures N" in text
