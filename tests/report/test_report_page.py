"""The report's data and page without a browser: grades, highlights, escaping, the CLI."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest
from report_runs import HOSTILE, TASK_ID_FIX, TOOLORCHESTRA, TRAJECTORIES, load, shared_run

from airline_gym.cli.main import main
from airline_gym.harness.regrade import load_task_id_map, regrade_file
from airline_gym.harness.report import load_run, render_report
from airline_gym.harness.report.grades import highlight_span
from airline_gym.harness.report.page import pack
from airline_gym.harness.results import Results, summarize


def _details(page: str, run: int = 0) -> list[dict]:
    """The packed transcripts and grades of run ``run`` in a rendered page (one line each)."""
    blob = re.search(
        rf'<script type="application/octet-stream" id="report-details-{run}">([^<]*)</script>', page
    )
    assert blob is not None
    lines = blob.group(1).split()
    return [d for line in lines for d in json.loads(gzip.decompress(base64.b64decode(line)))]


def _index(page: str) -> dict:
    text = re.search(
        r'<script type="application/json" id="report-index">(.*?)</script>', page, re.S
    )
    assert text is not None
    return json.loads(text.group(1))


@pytest.mark.parametrize(
    ("text", "info", "said"),
    [
        ("The total is $1,628.00 today.", "1628", "1,628"),
        ("You have FOUR bags", "four", "FOUR"),
        ("no match here", "1628", None),
        ("\U0001f600 refund of 327 dollars", "327", "327"),  # an emoji: 2 UTF-16 units
        ("İstanbul costs 44", "44", "44"),  # 'İ'.lower() is two characters
    ],
)
def test_highlight_span_covers_what_the_check_matched(text: str, info: str, said: str | None):
    span = highlight_span(text, info)
    if said is None:
        assert span is None
        return
    assert span is not None
    units = text.encode("utf-16-le")
    assert units[2 * span[0] : 2 * span[1]].decode("utf-16-le") == said


def test_grades_are_the_regrade_codes(aide: Path):
    """The page's DB diff and communicate matches equal what regrade computes, per simulation."""
    results, (overview, sims) = load_run(aide)
    regraded = regrade_file(aide)
    assert len(sims) == len(regraded) == 50
    diffs = 0
    for entry, result in zip(sims, regraded, strict=True):
        g = result.grade
        assert g is not None
        assert entry["grade"]["regraded"] == result.reward == entry["reward"]
        assert [(d["table"], d["key"], d["path"]) for d in entry["grade"]["db_diff"]] == [
            (d.table, d.key, d.path) for d in g.db_diff
        ]
        assert [(c["info"], c["met"], c["index"]) for c in entry["grade"]["communicate"]] == [
            (c.info, c.met, c.message_index) for c in g.communicate_checks
        ]
        diffs += bool(g.db_diff)
    assert diffs >= 5  # the failures of this run are mostly wrong DBs: the diffs are there
    assert overview["regrade_disagreements"] == 0


def test_overview_figures_are_the_files(aide: Path):
    results, (overview, _) = load_run(aide)
    assert overview["summary"] == summarize(Results.load(aide))
    grid = dict(overview["grid"])
    failed = {s["task_id"] for s in results.simulations if s["reward_info"]["reward"] != 1}
    assert {t for t, cells in grid.items() if cells[0][1] is False} == failed
    customer = [m for s in results.simulations for m in s["messages"] if m["role"] == "user"]
    assert overview["customer_tokens"] == {
        key: sum((m.get("usage") or {}).get(key, 0) for m in customer)
        for key in ("completion_tokens", "prompt_tokens")
    }
    rows = dict(overview["rows"])
    assert rows["agent"] == "claude-sonnet-4-5 (llm_agent)"
    assert rows["customer"] == "gpt-4.1 (user_simulator)"


def test_without_its_task_a_simulation_shows_what_was_recorded(tmp_path: Path, aide: Path):
    data = load(aide)
    data["simulations"][0]["task_id"] = "no-such-task"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    _, (_, sims) = load_run(path)
    grade = sims[0]["grade"]
    assert grade["regraded"] is None
    assert "no task 'no-such-task'" in grade["regrade_error"]
    recorded = data["simulations"][0]["reward_info"]
    assert grade["db_match"] == recorded["db_check"]["db_match"]
    assert sims[1]["grade"]["regraded"] is not None  # the others are still re-graded


def test_file_strings_are_escaped_and_transcripts_are_packed(hostile_run: Path):
    page = render_report([load_run(hostile_run)])
    assert HOSTILE not in page and "<img" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img" in page  # the run info
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts == [
        '<script type="application/json" id="report-index">',
        '<script type="application/octet-stream" id="report-details-0">',
        "<script>",
    ]
    sim = next(
        d for d in _details(page) if any(HOSTILE in (m["text"] or "") for m in d["messages"])
    )
    assert [f["kind"] for f in sim["flags"]] == ["leak", "premature_stop"]


def test_the_page_is_self_contained(aide: Path):
    page = render_report([load_run(aide)])
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page
    assert "default-src 'none'" in page  # the browser itself refuses any fetch


def test_pack_round_trips_with_lone_surrogates():
    value = [{"text": "a \ud83d b <script>", "n": 1}]
    assert json.loads(gzip.decompress(base64.b64decode(pack(value)))) == value
    assert pack(value) == pack(value)  # no timestamp in the gzip header


def test_two_runs_list_the_flips(own_runs: tuple[Path, Path]):
    gold, noop = own_runs
    page = render_report([load_run(gold), load_run(noop)])
    index = _index(page)
    assert [len(r["sims"]) for r in index["runs"]] == [12, 12]
    noop_ok = {s["task"] for s in index["runs"][1]["sims"] if s["ok"]}
    assert noop_ok != {"0", "1", "3", "5", "14", "20"}  # noop passes some tasks, not all
    flipped = set(re.findall(r'<tr class="flip regressed"><td>([^<]+)</td>', page))
    assert flipped == {"0", "1", "3", "5", "14", "20"} - noop_ok


def test_our_own_results_carry_their_messages_and_highlights(own_runs: tuple[Path, Path]):
    gold, _ = own_runs
    results = Results.load(gold)
    page = render_report([load_run(gold)])
    details = _details(page)
    for sim, d in zip(results.simulations, details, strict=True):
        assert len(d["messages"]) == len(sim["messages"])
        for check in d["grade"]["communicate"]:
            assert check["met"]  # the gold agent says every fact
            text = d["messages"][check["index"]]["text"]
            start, end = check["span"]
            said = text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")
            assert said.lower().replace(",", "") == check["info"].lower()
    assert sum(len(d["grade"]["communicate"]) for d in details) >= 2


def test_cli_writes_beside_the_file_and_refuses_bad_input(
    tmp_path: Path, own_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
):
    gold, noop = own_runs
    copy = tmp_path / "gold.json"
    copy.write_bytes(gold.read_bytes())
    assert main(["report", str(copy)]) == 0
    assert (tmp_path / "gold.html").is_file()
    assert capsys.readouterr().out.strip() == f"report: {tmp_path / 'gold.html'}"
    assert main(["report", str(gold), str(noop), str(gold)]) == 2
    assert main(["report", str(tmp_path / "absent.json")]) == 2
    assert main(["report", str(copy), "-o", str(copy)]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"simulations": [{"task_id": true}]}')
    assert main(["report", str(bad)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 4 and all(e.startswith("airline-gym report: error: ") for e in errors)
    assert copy.read_bytes() == gold.read_bytes()


def test_eval_report_writes_the_page_beside_the_results(tmp_path: Path):
    out = tmp_path / "run.json"
    args = ["eval", "--agent", "gold", "--user", "scripted", "--task-ids", "0,3", "--out", str(out)]
    assert main([*args, "--report"]) == 0
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert [s["task"] for s in _index(page)["runs"][0]["sims"]] == ["0", "3"]


def test_a_bare_list_of_simulations_without_messages_still_makes_a_page(tmp_path: Path, aide: Path):
    sims = load(aide)["simulations"][:3]
    del sims[0]["messages"]
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(sims))
    _, (overview, entries) = load_run(path)
    assert dict(overview["rows"])["agent"] == "not recorded"
    assert entries[0]["messages"] == []
    assert entries[0]["grade"]["regrade_error"].startswith("the file records no messages")
    assert entries[1]["grade"]["regraded"] == entries[1]["reward"]  # re-graded on the tau2 tasks


def test_a_task_id_map_fixes_a_file_with_wrong_task_ids():
    source = shared_run(TRAJECTORIES / TOOLORCHESTRA)
    _, (wrong, _) = load_run(source)
    fixed_map = load_task_id_map(TRAJECTORIES / TASK_ID_FIX)
    _, (fixed, _) = load_run(source, task_id_map=fixed_map)
    assert wrong["regrade_disagreements"] > 0
    assert fixed["regrade_disagreements"] == 0
