"""``eval --report`` when the page cannot be written: one line, never a traceback, and the
results file stays saved."""

from __future__ import annotations

import json

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
    # the results file's temp name fits the file system's 255 bytes; the page's (5 more) not
    out = tmp_path / ("r" * 240)
    assert main([*RUN, "--out", str(out)]) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in captured.err
    assert "cannot write the report" in errors[0] and "File name too long" in errors[0]
    assert f"the results are saved in {out}" in errors[0]
    assert len(json.loads(out.read_text())["simulations"]) == 2
    assert f"results: {out}" in captured.out and "report:" not in captured.out


def test_a_writable_page_is_written(tmp_path, capsys):
    assert main([*RUN, "--out", str(tmp_path / "run.json")]) == 0
    assert f"report: {tmp_path / 'run.html'}" in capsys.readouterr().out
    assert (tmp_path / "run.html").read_text().startswith("<!")
