"""``regrade`` on hostile input: one line naming the file and the field, exit 2; a replay that
raises is one failed row and the others go on (exit 1); mislabelled task ids get a hint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from airline_gym.cli.main import main
from airline_gym.data import data_files
from airline_gym.domain.tasks import load_task_set

HERE = Path(__file__).resolve()
SHARED = next((p / "shared" for p in HERE.parents if (p / "shared").is_dir()), HERE / "absent")
TRAJECTORIES = SHARED / "trajectories"
TOOLORCHESTRA = TRAJECTORIES / "t2old__lb-nvidia-toolorchestra__orchestrator__user-gpt-5.json"
README = Path(__file__).resolve().parents[2] / "README.md"


def call(task_id: str, call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A recorded assistant tool call and nothing else."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}
        ],
    }


def good_sim(sim_id: str = "s0", task_id: str = "1") -> dict[str, Any]:
    """A do-nothing simulation of a task that a do-nothing agent passes."""
    return {
        "id": sim_id,
        "task_id": task_id,
        "trial": 0,
        "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0},
        "messages": [{"role": "assistant", "content": "Hi! How can I help you today?"}],
    }


def regrade(capsys, *args: str | Path) -> tuple[int, str, str]:
    code = main(["regrade", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, path: Path, *needles: str, extra: tuple[str, ...] = ()) -> None:
    code, out, err = regrade(capsys, path, *extra)
    assert code == 2, err
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    for needle in needles:
        assert needle in err, err


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"messages": 5}, "'messages' must be a list, not number"),
        ({"messages": None}, "'messages' must be a list, not null"),
        ({"messages": [{"role": "assistant", "tool_calls": 5}]}, "'tool_calls'"),
        ({"messages": ["hello"]}, "message 0 must be an object"),
        ({"reward_info": {"reward": [1]}}, "'reward_info.reward' must be a number"),
        ({"reward_info": 3}, "'reward_info' must be an object"),
        ({"task_id": None}, "'task_id' must be a string or an integer"),
        ({"trial": "first"}, "'trial'"),
    ],
)
def test_a_malformed_simulation_is_one_line_naming_file_and_field(tmp_path, capsys, change, field):
    path = write(tmp_path, "run.json", {"simulations": [good_sim(), {**good_sim("s1"), **change}]})
    one_line_error(capsys, path, str(path), "simulation 1", field)


def embedded(tmp_path: Path, task: Any) -> Path:
    return write(tmp_path, "run.json", {"tasks": [task], "simulations": [good_sim()]})


def test_malformed_embedded_tasks_name_the_field(tmp_path, capsys, tau2_tasks):
    raw = tau2_tasks["1"].raw
    path = write(tmp_path, "run.json", {"tasks": {"1": raw}, "simulations": [good_sim()]})
    one_line_error(capsys, path, str(path), "'tasks' must be a list")
    no_id = {k: v for k, v in raw.items() if k != "id"}
    one_line_error(capsys, embedded(tmp_path, no_id), str(path), "task 0", "'id'")
    for name, bad in (("reward_basis", "DB"), ("communicate_info", [1, 2])):
        criteria = {**raw["evaluation_criteria"], name: bad}
        path = embedded(tmp_path, {**raw, "evaluation_criteria": criteria})
        one_line_error(capsys, path, str(path), f"evaluation_criteria.{name}")
    criteria = {**raw["evaluation_criteria"], "actions": [{"name": 5}]}
    one_line_error(capsys, embedded(tmp_path, {**raw, "evaluation_criteria": criteria}), "actions")


def test_json_nested_100k_deep_is_one_line(tmp_path, capsys):
    path = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    one_line_error(capsys, path, str(path), "nested too deeply")
    sims = write(tmp_path, "sims.json", [good_sim()])
    one_line_error(capsys, sims, str(path), extra=("--tasks", str(path)))
    one_line_error(capsys, sims, str(path), extra=("--task-id-map", str(path)))


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"tasks": 1}', "task"),
        ("[1, 2]", "task"),
        ('[{"user_scenario": {}}]', "'id'"),
        ("[{", "not valid JSON"),
    ],
)
def test_hostile_tasks_files_are_one_line_naming_the_file(tmp_path, capsys, content, needle):
    tasks = write(tmp_path, "tasks.json", content)
    sims = write(tmp_path, "sims.json", [good_sim()])
    one_line_error(capsys, sims, str(tasks), needle, extra=("--tasks", str(tasks)))


def test_a_truncated_db_json_names_the_file(tmp_path, capsys, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    files = data_files()
    for source in (files.db, files.tasks, files.split_tasks, files.policy, files.user_guidelines):
        shutil.copy(source, data / source.name)
    for source in (files.agent_instruction, files.tools_source, files.data_model_source):
        if source is not None:
            shutil.copy(source, data / source.name)
    text = (data / "db.json").read_text(encoding="utf-8")
    (data / "db.json").write_text(text[: len(text) // 2], encoding="utf-8")
    monkeypatch.setenv("AIRLINE_GYM_DATA_DIR", str(data))
    sims = write(tmp_path, "sims.json", [good_sim()])
    one_line_error(capsys, sims, str(data / "db.json"))


def test_a_replay_that_raises_is_one_failed_row_and_the_others_go_on(tmp_path, capsys):
    huge = {"user_id": "mia_li_3668", "amount": int("9" * 401)}
    hostile = {**good_sim("huge", "5"), "messages": [call("5", "c1", "send_certificate", huge)]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps([good_sim("fine"), hostile]), encoding="utf-8")
    code, out, err = regrade(capsys, path, "--json")
    rows = {row["simulation_id"]: row for row in map(json.loads, out.splitlines())}
    assert set(rows) == {"fine", "huge"} and rows["fine"]["agrees"] is True
    assert "Traceback" not in err
    # the huge integer either replays as an error result or is reported as a failed replay
    assert code in (0, 1)
    if rows["huge"]["error"]:
        assert code == 1 and "could not be replayed" in err


def test_regrade_exit_codes_differ_for_bad_input_and_disagreement(tmp_path, capsys):
    agree = write(tmp_path, "agree.json", [good_sim()])
    assert regrade(capsys, agree)[0] == 0
    disagree = write(tmp_path, "disagree.json", [{**good_sim(), "reward_info": {"reward": 0.0}}])
    assert regrade(capsys, disagree)[0] == 1
    assert regrade(capsys, write(tmp_path, "bad.json", {"simulations": 1}))[0] == 2


@pytest.mark.skipif(not TOOLORCHESTRA.is_file(), reason="../shared/trajectories is absent")
def test_mislabelled_task_ids_get_a_task_id_map_hint(tmp_path, capsys):
    code, _, err = regrade(capsys, TOOLORCHESTRA, "--json")
    assert code == 1
    hint = [line for line in err.splitlines() if line.startswith("hint:")]
    assert len(hint) == 1 and "--task-id-map" in hint[0]
    assert err.strip().splitlines()[-1].startswith("agreement: ")
    fix = TRAJECTORIES / "t2old__lb-nvidia-toolorchestra__task_id_fix.json"
    code, _, err = regrade(capsys, TOOLORCHESTRA, "--json", "--task-id-map", fix)
    assert code == 0 and "hint:" not in err
    faithfulness = README.parent / "docs" / "faithfulness.md"
    assert "--task-id-map" in faithfulness.read_text(encoding="utf-8")


def test_a_correctly_labelled_file_gets_no_hint(tmp_path, capsys):
    tasks = load_task_set("tau2")
    task = tasks["2"]  # a task with gold actions
    checks = [{"action": {"action_id": a.action_id}} for a in task.actions]
    sim = {**good_sim("ok", "2"), "reward_info": {"reward": 0.0, "action_checks": checks}}
    wrong = {**sim, "id": "wrong", "task_id": "3"}
    code, _, err = regrade(capsys, write(tmp_path, "a.json", [sim]), "--json")
    assert "hint:" not in err
    code, _, err = regrade(capsys, write(tmp_path, "b.json", [wrong]), "--json")
    assert "hint:" in err and "task 2's" in err


def test_tasks_that_disagree_with_a_files_embedded_tasks_are_refused(tmp_path, capsys) -> None:
    """``regrade RUN --tasks B`` on a run that embeds the tasks it was played on: B is not
    silently ignored; tasks that differ are one line and exit 2, the same tasks are said to be
    used (issue 35, 18)."""
    from airline_gym.harness.evaluate import EvalConfig, evaluate

    run = tmp_path / "run.json"
    evaluate("noop", EvalConfig(task_ids=["0", "1", "2", "3", "4"]), out=run)
    tau2 = load_task_set("tau2")
    same, other = tmp_path / "same.json", tmp_path / "B.json"
    same.write_text(json.dumps([tau2[i].raw for i in range(10)]), encoding="utf-8")
    shifted = [{**tau2[i + 1].raw, "id": str(i)} for i in range(9)] + [tau2[9].raw]
    other.write_text(json.dumps(shifted), encoding="utf-8")
    one_line_error(
        capsys,
        run,
        f"{run} embeds the tasks it was run on, and 5 of the 5 its simulations use differ",
        "from tasks file",
        "(0, 1, 2, 3, 4)",
        "drop --tasks",
        extra=("--tasks", str(other)),
    )
    code, _, err = regrade(capsys, run, "--tasks", same)
    assert code == 0, err
    assert f"{run}: graded against the tasks it embeds (the same as {same}'s)" in err
    code, _, err = regrade(capsys, run)  # no --tasks: nothing new is said
    assert code == 0 and "graded against" not in err
    assert err.strip().splitlines()[-1] == "agreement: 5/5 simulations"
