"""The grade is told truly in every output (issue 27, B5-B7): the reward basis ``eval`` records
is the one ``regrade`` and ``report`` grade on; a re-grade on another basis claims no
agreement; a failed NL judge (``reward_info.info.nl.error``) is counted and marked, never
called a disagreement and never shown as a plain 0. The judge is a scripted OpenAI-compatible
server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli
from scripted_replies import judge_says

from airline_gym.domain.tasks import load_task_set
from airline_gym.harness.report import load_run
from airline_gym.testing.openai_server import OpenAIServer, Reply

TASKS = load_task_set("tau2")


def run(*args: str) -> tuple[int, str, str]:
    """``airline-gym ARGS`` in this process: (exit code, stdout, stderr)."""
    done = run_cli(*args)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def action_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The do-nothing agent on all 50 tasks, graded on DB,COMMUNICATE,ACTION (the issue's)."""
    out = tmp_path_factory.mktemp("rb") / "rb.json"
    code, _, err = run(
        "eval", "--agent", "noop", "--reward-basis", "DB,COMMUNICATE,ACTION", "--out", str(out)
    )
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def judge_failed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """Two tasks on DB,NL_ASSERTION whose judge answers prose: (results file, eval's stdout)."""
    out = tmp_path_factory.mktemp("nl") / "nl.json"
    with OpenAIServer(default=Reply("I think it went fine.")) as server:
        code, stdout, err = run(
            "eval", "--agent", "noop", "--task-ids", "0,1", "--reward-basis", "DB,NL_ASSERTION",
            "--judge-model", "openai/judge", "--judge-api-base", server.base_url,
            "--out", str(out),
        )  # fmt: skip
    assert code == 1, err  # every simulation's judge failed: a failed run (B8)
    assert "2 of 2 simulations failed (NL judge failed 2)" in err.strip().splitlines()[-1]
    return out, stdout, err


def test_regrade_grades_on_the_recorded_basis(action_run: Path) -> None:
    code, _, err = run("regrade", str(action_run), "--summary")
    assert code == 0, err
    assert err.strip().splitlines()[-1] == "agreement: 50/50 simulations"
    assert "recorded reward basis DB,COMMUNICATE,ACTION" in err


def test_regrade_on_another_basis_claims_no_agreement(action_run: Path) -> None:
    code, stdout, err = run("regrade", str(action_run), "--reward-basis", "DB")
    assert code == 0, err
    assert "agreement" not in err and "disagree" not in err
    assert "re-graded under another basis than the recorded one (DB): 50 simulations" in err
    rows = [line.split() for line in stdout.splitlines() if line.strip()[:1].isalnum()]
    agree_column = {row[4] for row in rows if len(row) > 4 and row[1].isdigit()}
    assert agree_column == {"-"}
    # the recorded basis named again is no other basis: compared as usual
    code, _, err = run(
        "regrade", str(action_run), "--summary", "--reward-basis", "ACTION,DB,COMMUNICATE"
    )
    assert code == 0 and err.strip().splitlines()[-1] == "agreement: 50/50 simulations"


def test_report_grades_on_the_recorded_basis(action_run: Path) -> None:
    _, (overview, entries) = load_run(action_run)
    assert overview["regrade_disagreements"] == 0
    assert {tuple(e["grade"]["basis"]) for e in entries} == {("DB", "COMMUNICATE", "ACTION")}


def test_eval_summary_counts_judge_failures(judge_failed_run: tuple[Path, str, str]) -> None:
    _, stdout, stderr = judge_failed_run
    assert "NL judge failures: 2 simulation(s) have no verdict" in stdout
    progress = [line for line in stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 2
    assert all(": no verdict (the NL judge failed) (agent_stop)" in line for line in progress)


def test_regrade_marks_a_recorded_judge_failure_and_calls_it_no_disagreement(
    judge_failed_run: tuple[Path, str, str],
) -> None:
    path, _, _ = judge_failed_run
    with OpenAIServer(judge_says(True, TASKS)) as server:
        code, stdout, err = run(
            "regrade", str(path), "--judge-model", "openai/judge", "--judge-api-base",
            server.base_url,
        )  # fmt: skip
        asked = len(server.requests)
    assert asked == 2  # the recorded basis has NL_ASSERTION: the judge is asked again
    assert code == 0, err
    assert "disagree" not in err and " NO " not in stdout
    assert stdout.count("judge failed (recorded)") == 2
    assert "2 with a recorded NL judge failure" in err


def test_regrade_marks_its_own_judge_failure(judge_failed_run: tuple[Path, str, str]) -> None:
    path, _, _ = judge_failed_run
    with OpenAIServer(default=Reply("prose again")) as server:
        code, stdout, err = run(
            "regrade", str(path), "--json", "--judge-model", "openai/judge",
            "--judge-api-base", server.base_url,
        )  # fmt: skip
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert code == 1  # a judge that failed is a failed re-grade ...
    assert {r["status"] for r in rows} == {"judge_error"}  # ... not a disagreement
    assert all(r["agrees"] is None and "not JSON" in r["judge_error"] for r in rows)
    assert "disagree" not in err and "2 NL judge failure(s) now" in err


def test_report_shows_and_counts_judge_failures(judge_failed_run: tuple[Path, str, str]) -> None:
    path, _, _ = judge_failed_run
    _, (overview, entries) = load_run(path)
    assert overview["judge_failures"] == 2
    assert overview["regrade_disagreements"] == 0
    for entry in entries:
        assert "NL judge failed" in entry["grade"]["judge_error"]
        assert entry["grade"]["regraded"] is None


def test_compare_says_which_failures_had_no_verdict(judge_failed_run: tuple[Path, str, str]):
    path, _, _ = judge_failed_run
    code, stdout, _ = run("compare", str(path), str(path))
    assert code == 0
    said = [line.strip() for line in stdout.splitlines() if "no verdict" in line]
    assert said == [
        f"2 simulation(s) of {side} have no verdict (the NL judge failed): counted as "
        "failures, not graded"
        for side in "AB"
    ]
    code, stdout, _ = run("compare", str(path), str(path), "--json")
    assert json.loads(stdout)["judge_failures_b"] == 2
