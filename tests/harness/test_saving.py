"""Saving a run: nothing kills it, nothing it writes is lost, one writer at a time, linear cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from airline_gym.agents import DONE, text_message, tool_call_message
from airline_gym.env import AirlineEnv
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.export import write_jsonl
from airline_gym.harness.journal import RunFile
from airline_gym.harness.results import Results
from airline_gym.harness.runner import run_episode

SURROGATE = "\ud83d"
HUGE = int("9" * 401)


class Hostile:
    """On task 5: a tool call with a 401-digit integer; on task 4: lone surrogates; else done."""

    def reset(self, info: dict[str, Any]) -> None:
        self.task, self.turn = info["task_id"], 0

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        self.turn += 1
        if self.turn > 1:
            return DONE
        if self.task == "5":
            arguments = {"user_id": "mia_li_3668", "amount": HUGE}
            return tool_call_message("send_certificate", arguments, "c1")
        if self.task == "4":
            return {
                "role": "assistant",
                "content": f"Let me look {SURROGATE}",
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {
                            "name": "get_user_details",
                            "arguments": json.dumps({"user_id": SURROGATE}),
                        },
                    }
                ],
            }
        return DONE


def keys(results: Results) -> list[tuple[str, int]]:
    return [(str(s["task_id"]), int(s["trial"])) for s in results.simulations]


def test_a_huge_integer_or_a_lone_surrogate_never_kills_an_eval_run(tmp_path):
    out = tmp_path / "run.json"
    config = EvalConfig(task_ids=["1", "5", "4", "0"])
    results = evaluate(Hostile(), config, out=out)
    saved = Results.load(out)
    assert keys(saved) == keys(results) == [("1", 0), ("5", 0), ("4", 0), ("0", 0)]
    huge = saved.simulations[1]
    if huge["termination_reason"] == "agent_error":  # the domain could not take the integer
        assert "OverflowError" in huge["reward_info"]["info"]["error"]
    else:  # the domain answers with an error result
        assert any(m.get("error") for m in huge["messages"] if m["role"] == "tool")
    said = saved.simulations[2]["messages"]
    assert any(m["content"] == f"Let me look {SURROGATE}" for m in said)  # read back unchanged
    calls = [c for m in said for c in m.get("tool_calls") or []]
    assert calls[0]["arguments"] == {"user_id": SURROGATE}
    ran = []
    again = evaluate(Hostile(), config, out=out, resume=True, progress=lambda s, *_: ran.append(s))
    assert ran == [None] and keys(again) == keys(saved)  # resume: nothing left to run


def test_write_jsonl_keeps_the_old_file_when_a_record_fails_and_escapes_surrogates(tmp_path):
    path = tmp_path / "rollouts.jsonl"
    result = run_episode(AirlineEnv(user="scripted"), Speaks(f"hi {SURROGATE}"), "1", 0)
    assert write_jsonl([result], path) == 1
    before = path.read_bytes()
    record = json.loads(before.decode("utf-8"))
    assert any(m["content"] == f"hi {SURROGATE}" for m in record["messages"])
    with pytest.raises(TypeError):
        write_jsonl([result, {"messages": {1, 2}}], path)  # a set cannot be written
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name != path.name]  # no temp file left


class Speaks:
    def __init__(self, text: str) -> None:
        self.text, self.said = text, False

    def reset(self, info: dict[str, Any]) -> None:
        self.said = False

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        if self.said:
            return DONE
        self.said = True
        return text_message(self.text)


def test_saving_appends_to_a_journal_and_writes_the_file_once(tmp_path):
    out = tmp_path / "run.json"
    journal = out.with_name("run.json.journal")
    seen = []

    def progress(sim, done, total, results):
        lines = journal.read_text(encoding="utf-8").count("\n")
        seen.append((out.exists(), lines, done))

    evaluate("noop", EvalConfig(task_ids=["0", "1", "2"], trials=2), out=out, progress=progress)
    # during the run: no results file, one journal line per finished simulation after the header
    assert seen == [(False, 1, 0)] + [(False, n + 1, n) for n in range(1, 7)]
    assert out.exists() and not journal.exists()
    assert len(Results.load(out).simulations) == 6


def test_resume_reads_a_killed_runs_journal_and_ignores_a_torn_line(tmp_path):
    out = tmp_path / "run.json"
    config = EvalConfig(task_ids=["0", "1", "2"])
    whole = evaluate("noop", config, out=tmp_path / "whole.json")
    journal = out.with_name("run.json.journal")
    header = {"timestamp": whole.timestamp, "info": whole.info, "tasks": whole.tasks}
    lines = [json.dumps(header), *(json.dumps(s) for s in whole.simulations[:2])]
    journal.write_text("\n".join(lines) + "\n" + '{"id": "torn', encoding="utf-8")
    ran = []
    resumed = evaluate("noop", config, out=out, resume=True, progress=lambda s, *_: ran.append(s))
    assert len(ran) == 2 and ran[1]["task_id"] == "2"  # only the missing simulation ran
    assert keys(Results.load(out)) == keys(resumed) == [("0", 0), ("1", 0), ("2", 0)]
    assert not journal.exists()


def test_resume_of_a_hand_edited_file_is_one_clear_error(tmp_path):
    out = tmp_path / "run.json"
    config = EvalConfig(task_ids=["0", "1"])
    evaluate("noop", config, out=out)
    data = json.loads(out.read_text(encoding="utf-8"))
    for change, field in (
        ({"trial": "first"}, "'trial'"),
        ({"messages": 7}, "'messages'"),
        ({"reward_info": {"reward": "1"}}, "reward"),
    ):
        edited = {**data, "simulations": [{**data["simulations"][0], **change}]}
        out.write_text(json.dumps(edited), encoding="utf-8")
        with pytest.raises(ValueError, match=f"{out.name}: simulation 0: .*{field}"):
            evaluate("noop", config, out=out, resume=True)
    out.write_text(json.dumps({**data, "info": "x"}), encoding="utf-8")
    with pytest.raises(ValueError, match="'info' must be an object"):
        evaluate("noop", config, out=out, resume=True)
    done = _cli("eval", "--agent", "noop", "--task-ids", "0,1", "--out", str(out), "--resume")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and str(out) in done.stderr


def test_a_second_run_on_the_same_file_is_refused_while_the_first_holds_it(tmp_path):
    out = tmp_path / "run.json"
    with RunFile(out):
        for resume in (False, True):
            with pytest.raises(ValueError, match="being written by another run"):
                evaluate("noop", EvalConfig(task_ids=["0"]), out=out, resume=resume)
    assert not out.exists()
    evaluate("noop", EvalConfig(task_ids=["0"]), out=out)  # released: the next run may write
    assert len(Results.load(out).simulations) == 1


HELD_NOOP = """
import os, sys, time
from airline_gym import agents
act = agents.NoOpAgent.act
def held(self, observation, info):  # waits until the test lets it go
    deadline = time.monotonic() + 120
    while not os.path.exists(os.environ["RELEASE"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return act(self, observation, info)
agents.NoOpAgent.act = held
from airline_gym.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _cli(*args: str, script: str | None = None, **kw: Any) -> Any:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **kw.pop("env", {})}
    command = (
        [sys.executable, "-c", script, *args]
        if script
        else [
            sys.executable,
            "-m",
            "airline_gym.cli",
            *args,
        ]
    )
    if kw.pop("background", False):
        return subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_two_eval_processes_on_one_out_never_duplicate_simulations(tmp_path):
    out = tmp_path / "run.json"
    args = [
        "eval",
        "--agent",
        "noop",
        "--task-ids",
        ",".join(map(str, range(15))),
        "--out",
        str(out),
    ]
    release = tmp_path / "release"
    env = {"RELEASE": str(release)}
    first = _cli(*args, "--resume", script=HELD_NOOP, background=True, env=env)
    try:
        deadline = time.monotonic() + 120
        journal = out.with_name("run.json.journal")
        while not journal.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert first.poll() is None, "the first run ended before the second could start"
        for extra in (["--resume"], []):
            second = _cli(*args, *extra)
            assert second.returncode == 2 and "Traceback" not in second.stderr
            assert len(second.stderr.strip().splitlines()) == 1
            refusals = ("being written by another run", "exists", "has an unfinished run")
            assert any(reason in second.stderr for reason in refusals), second.stderr
        release.touch()
        _, err = first.communicate(timeout=240)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err
    saved = keys(Results.load(out))
    assert sorted(saved) == sorted(set(saved)) and len(saved) == 15


def test_an_unfinished_run_is_not_overwritten_without_resume(tmp_path):
    out = tmp_path / "run.json"
    journal = out.with_name("run.json.journal")
    journal.write_text('{"info": {}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"unfinished run \(run.json.journal\): pass resume=True"):
        evaluate("noop", EvalConfig(task_ids=["0"]), out=out)
    assert journal.read_text(encoding="utf-8") == '{"info": {}}\n' and not out.exists()
