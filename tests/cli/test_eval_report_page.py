"""``eval --report`` when the page cannot be written: one line, never a traceback, and the
results file stays saved."""

from __future__ import annotations

import json
import os
import stat

from airline_gym.cli.main import main

RUN = ["eval", "--agent", "noop", "--task-ids", "0,1", "--report"]


def test_a_folder_where_the_page_goes_is_refused_before_the_run(tmp_path, capsys):
    (tmp_path / "run.html").mkdir()
    assert main([*RUN, "--out", str(tmp_path / "run.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--report writes" in err[0] and "is a folder" in err[0], err
    assert not (tmp_path / "run.json").exists()  # refused before anything ran


def test_a_page_that_fails_to_write_after_the_run_is_one_line_and_the_results_stay(
    tmp_path, capsys
):
    out = tmp_path / "run.json"
    os.mkfifo(tmp_path / "run.html")  # not a folder, so not refused before the run: after it
    assert main([*RUN, "--out", str(out)]) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in captured.err
    assert "cannot write the report" in errors[0] and "(it is a fifo)" in errors[0], errors
    assert f"the results are saved in {out}" in errors[0]
    assert len(json.loads(out.read_text())["simulations"]) == 2
    assert f"results: {out}" in captured.out and "report:" not in captured.out
    assert stat.S_ISFIFO(os.stat(tmp_path / "run.html").st_mode)  # never replaced


def test_a_writable_page_is_written(tmp_path, capsys):
    assert main([*RUN, "--out", str(tmp_path / "run.json")]) == 0
    assert f"report: {tmp_path / 'run.html'}" in capsys.readouterr().out
    assert (tmp_path / "run.html").read_text().startswith("<!")
