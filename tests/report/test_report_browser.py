"""The report in a real browser (headless Debian chromium): what a person sees and can do.

The page is opened from disk (file://). Skipped without chromium, chromedriver and selenium,
except under CI, which installs them (then a missing one fails).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from report_runs import (
    HOSTILE,
    IRONSHELL_GPT,
    ODD_TASK_ID,
    OPENAI,
    TAU3,
    TRAJECTORIES,
    load,
    shared_run,
)

from airline_gym.harness.regrade import regrade_file
from airline_gym.harness.report import write_report
from airline_gym.harness.results import Results, summarize
from airline_gym.harness.results.compare import compare

TIMEOUT = 60  # seconds: generous, the machine may be loaded


def _wait(browser: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, TIMEOUT).until(condition)


def _open(browser: Any, page: Path, fragment: str = "") -> None:
    """A fresh load of ``page`` (from disk), waiting until its script has drawn the list."""
    browser.get("about:blank")
    browser.get(page.as_uri() + fragment)
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")


def _show(browser: Any, key: str) -> Any:
    """Open one simulation by its link and wait until it is drawn; the view."""
    browser.execute_script("location.hash = arguments[0]", key)
    return _wait(browser, lambda d: _rendered(d, key))


def _rendered(browser: Any, key: str) -> Any:
    from selenium.webdriver.common.by import By

    view = browser.find_element(By.ID, "sim-view")
    return view if view.get_attribute("data-rendered") == key else None


def _filter(browser: Any, select_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    before = browser.execute_script("return document.body.dataset.filtered")
    Select(browser.find_element(By.ID, select_id)).select_by_value(value)
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.filtered") != before)


def _visible_rows(browser: Any) -> list[str]:
    return browser.execute_script(
        "return [...document.querySelectorAll('#sim-list tbody tr')]"
        ".filter(r => !r.hidden).map(r => r.dataset.run + ':' + r.dataset.key)"
    )


def _screenshot(browser: Any, tmp_path: Path, name: str) -> Path:
    """Save what the browser shows (also into $REPORT_SCREENSHOTS when set)."""
    folder = Path(os.environ.get("REPORT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    assert browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000  # a drawn page, not a blank one
    return path


def _key(sim: dict[str, Any]) -> str:
    return f"task-{sim['task_id']}-trial-{sim.get('trial') or 0}"


@pytest.fixture(scope="module")
def aide_page(aide: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report([aide], tmp_path_factory.mktemp("pages") / "aide.html")


@pytest.mark.parametrize("which", ["aide", "tau3", "own"])
def test_overview_numbers_equal_the_files(
    browser: Any, which: str, aide: Path, own_runs: tuple[Path, Path], tmp_path: Path
):
    from selenium.webdriver.common.by import By

    source = {"aide": aide, "tau3": TAU3, "own": own_runs[0]}[which]
    results = Results.load(shared_run(source) if which == "tau3" else source)
    figures = summarize(results)
    page = write_report([source], tmp_path / "report.html")
    _open(browser, page)

    def figure(name: str) -> str:
        return browser.find_element(By.CSS_SELECTOR, f'[data-figure="{name}"]').text

    assert figure("successes") == str(figures["successes"])
    assert figure("simulations") == str(len(results.simulations))
    assert figure("mean_reward") == f"{figures['mean_reward']:.3f}"
    assert figure("tool_errors_per_episode") == f"{figures['tool_errors_per_episode']:.2f}"
    for k, value in figures["pass_hat_k"].items():
        cell = browser.find_element(By.CSS_SELECTOR, f'[data-passk="{k}"]')
        assert cell.text == f"{value:.3f}"
    for reason, count in figures["terminations"].items():
        cell = browser.find_element(By.CSS_SELECTOR, f'[data-termination="{reason}"]')
        assert cell.text == str(count)
    failures = len(results.simulations) - figures["successes"]
    assert len(browser.find_elements(By.CSS_SELECTOR, ".grid .cell.fail")) == failures
    assert len(browser.find_elements(By.CSS_SELECTOR, "#passk-svg circle")) == len(
        figures["pass_hat_k"]
    )
    total = len(results.simulations)
    assert browser.find_element(By.ID, "shown").text == f"{total} of {total} simulations shown"


def test_filtering_to_failures_shows_exactly_the_failed_simulations(
    browser: Any, aide: Path, aide_page: Path
):
    from selenium.webdriver.common.by import By

    failed = {f"0:{_key(s)}" for s in load(aide)["simulations"] if s["reward_info"]["reward"] != 1}
    assert len(failed) == 14
    _open(browser, aide_page)
    _filter(browser, "f-outcome", "failure")
    assert set(_visible_rows(browser)) == failed
    assert browser.find_element(By.ID, "shown").text == "14 of 50 simulations shown"
    _filter(browser, "f-outcome", "success")
    assert len(_visible_rows(browser)) == 36


def test_tool_filter_and_full_text_search(browser: Any, aide: Path, aide_page: Path):
    from selenium.webdriver.common.by import By

    sims = load(aide)["simulations"]
    cancelled = {
        f"0:{_key(s)}"
        for s in sims
        if any(
            c["name"] == "cancel_reservation"
            for m in s["messages"]
            for c in m.get("tool_calls") or []
        )
    }
    _open(browser, aide_page)
    _filter(browser, "f-tool", "cancel_reservation")
    assert set(_visible_rows(browser)) == cancelled and cancelled
    _filter(browser, "f-tool", "")
    word = "anya_garcia_5901"
    said = {
        f"0:{_key(s)}"
        for s in sims
        if any(
            word in (m.get("content") or "") or word in json.dumps(m.get("tool_calls"))
            for m in s["messages"]
        )
    }
    before = browser.execute_script("return document.body.dataset.filtered")
    browser.find_element(By.ID, "f-text").send_keys(word.upper())  # search ignores case
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.filtered") != before)
    assert set(_visible_rows(browser)) == said and 0 < len(said) < 50


def test_a_failure_shows_its_transcript_db_diff_and_never_said(
    browser: Any, aide: Path, aide_page: Path, tmp_path: Path
):
    from selenium.webdriver.common.by import By

    sim = next(s for s in load(aide)["simulations"] if s["task_id"] == "14")
    grade = next(r for r in regrade_file(aide) if r.task_id == "14").grade
    assert grade is not None and grade.db_diff
    _open(browser, aide_page)
    view = _show(browser, "task-14-trial-0")
    messages = view.find_elements(By.CSS_SELECTOR, ".transcript .msg")
    assert len(messages) == len(sim["messages"])
    first_user = next(m["content"] for m in sim["messages"] if m["role"] == "user")
    assert messages[1].find_element(By.CSS_SELECTOR, ".text").text == first_user.strip()
    calls = [c["name"] for m in sim["messages"] for c in m.get("tool_calls") or []]
    shown_calls = [
        e.text.lstrip("\u2192 ") for e in view.find_elements(By.CSS_SELECTOR, ".call-name")
    ]
    assert shown_calls == calls
    fields = view.find_elements(By.CSS_SELECTOR, ".db-diff .field .where code")
    assert [f.text for f in fields] == [f"{d.table}[{d.key}]{d.path}" for d in grade.db_diff]
    assert "differs from the gold DB" in view.find_element(By.CSS_SELECTOR, ".db-match").text
    items = view.find_elements(By.CSS_SELECTOR, "ul.communicate li")
    assert len(items) == len(grade.communicate_checks)
    for item, check in zip(items, grade.communicate_checks, strict=True):
        assert ("never said" in item.text) == (not check.met)
    assert "user_stop" in view.find_element(By.CSS_SELECTOR, ".termination").text
    _screenshot(browser, tmp_path, "failure-task-14.png")


def test_a_communicated_string_is_highlighted_where_it_was_said(
    browser: Any, aide_page: Path, tmp_path: Path
):
    from selenium.webdriver.common.by import By

    _open(browser, aide_page)
    view = _show(browser, "task-3-trial-0")  # communicate_info ["4"], said in message #10
    link = view.find_element(By.CSS_SELECTOR, "ul.communicate a.said-link")
    assert link.text == "said in message #10"
    mark = view.find_element(By.CSS_SELECTOR, "#m-0-10 mark")
    assert mark.text == "4"
    link.click()
    _wait(browser, lambda d: "pulse" in (mark.get_attribute("class") or ""))
    assert browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return r.top >= 0 && r.bottom <= innerHeight",
        mark,
    )
    _screenshot(browser, tmp_path, "highlight-task-3.png")


def test_a_script_from_a_model_shows_as_text_and_never_runs(
    browser: Any, hostile_run: Path, tmp_path: Path
):
    from selenium.webdriver.common.by import By

    page = write_report([hostile_run], tmp_path / "hostile.html")
    _open(browser, page, "#task-3-trial-0")  # straight to the simulation by its link
    view = _wait(browser, lambda d: _rendered(d, "task-3-trial-0"))
    assert HOSTILE in view.find_element(By.CSS_SELECTOR, "#m-0-2 .text").text
    assert any(HOSTILE in e.text for e in view.find_elements(By.CSS_SELECTOR, "pre.tool-output"))
    script = "<script>window.__pwned = 1</script>"  # in JSON, the onerror quotes are escaped
    assert any(script in e.text for e in view.find_elements(By.CSS_SELECTOR, "pre.args"))
    browser.execute_script("location.hash = ''")
    assert HOSTILE in browser.find_element(By.CSS_SELECTOR, ".facts td").text  # the agent row
    terminations = browser.find_elements(By.CSS_SELECTOR, "table.terminations a")
    assert HOSTILE in [a.text for a in terminations]
    options = browser.find_elements(By.CSS_SELECTOR, "#f-termination option")
    assert HOSTILE in [o.text for o in options]
    _filter(browser, "f-termination", HOSTILE)
    assert _visible_rows(browser) == ["0:task-5-trial-0"]
    view = _show(browser, f"task-{ODD_TASK_ID}-trial-0")  # its own link opens it
    assert view.find_element(By.CSS_SELECTOR, ".pane h2").text.startswith(f"task {ODD_TASK_ID},")
    assert "no task" in view.find_element(By.CSS_SELECTOR, ".grade").text  # not re-graded
    assert browser.execute_script("return window.__pwned") is None
    assert browser.find_elements(By.TAG_NAME, "img") == []
    _screenshot(browser, tmp_path, "hostile.png")


def test_audit_flags_sit_on_the_turns_they_concern(browser: Any, hostile_run: Path, tmp_path: Path):
    from selenium.webdriver.common.by import By

    page = write_report([hostile_run], tmp_path / "flags.html")
    _open(browser, page)
    view = _show(browser, "task-3-trial-0")
    assert "leak" in view.find_element(By.CSS_SELECTOR, "#m-0-1 .flag").text
    flag = view.find_element(By.CSS_SELECTOR, "#m-0-3 .flag").text
    assert "premature_stop" in flag and "<b>the end</b>" in flag
    assert not view.find_elements(By.CSS_SELECTOR, "#m-0-2 .flag")


def test_two_runs_show_the_flipped_tasks_side_by_side(
    browser: Any, own_runs: tuple[Path, Path], tmp_path: Path
):
    from selenium.webdriver.common.by import By

    gold, noop = own_runs
    regressed = compare(Results.load(gold), Results.load(noop)).regressed
    page = write_report([gold, noop], tmp_path / "two.html")
    _open(browser, page)
    rows = browser.find_elements(By.CSS_SELECTOR, "#flips tr.flip")
    assert [r.find_element(By.TAG_NAME, "td").text for r in rows] == regressed and regressed
    rows[0].find_element(By.LINK_TEXT, "trial 0").click()
    view = _wait(browser, lambda d: _rendered(d, f"task-{regressed[0]}-trial-0"))
    panes = view.find_elements(By.CSS_SELECTOR, ".pane")
    assert [p.get_attribute("class") for p in panes] == ["pane ok", "pane fail"]
    assert [p.find_element(By.TAG_NAME, "h2").text.split(" \u2014")[0] for p in panes] == [
        "Run A",
        "Run B",
    ]
    _screenshot(browser, tmp_path, "two-runs.png")


def test_a_leaderboard_pair_opens_with_both_runs(browser: Any, aide: Path, tmp_path: Path):
    from selenium.webdriver.common.by import By

    other = shared_run(IRONSHELL_GPT)
    page = write_report([aide, other], tmp_path / "pair.html")
    _open(browser, page)
    flips = compare(Results.load(aide), Results.load(other))
    rows = browser.find_elements(By.CSS_SELECTOR, "#flips tr.flip")
    assert len(rows) == len(flips.improved) + len(flips.regressed)
    _filter(browser, "f-run", "1")
    assert len(_visible_rows(browser)) == len(Results.load(other).simulations)


def test_the_customer_audits_own_flags_show_on_their_turns(browser: Any, tmp_path: Path):
    """Flags computed by the customer-simulator audit (not hand-made) on a real run."""
    from selenium.webdriver.common.by import By

    from airline_gym.harness.user_audit import USER_AUDIT_KEY, audit_record

    source = shared_run(TRAJECTORIES / OPENAI)
    data = load(source)
    tasks = {str(t["id"]): t for t in data["tasks"]}
    flagged = {}
    for sim in data["simulations"]:
        sim[USER_AUDIT_KEY] = [dict(f) for f in audit_record(sim, tasks[str(sim["task_id"])])]
        if sim[USER_AUDIT_KEY]:
            flagged[_key(sim)] = sim[USER_AUDIT_KEY]
    assert len(flagged) >= 3
    path = tmp_path / "audited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    page = write_report([path], tmp_path / "audited.html")
    _open(browser, page)
    for key, flags in list(flagged.items())[:3]:
        view = _show(browser, key)
        shown = [
            (message.get_attribute("id"), flag.find_element(By.CSS_SELECTOR, ".flag-kind").text)
            for message in view.find_elements(By.CSS_SELECTOR, ".msg.flagged")
            for flag in message.find_elements(By.CSS_SELECTOR, ".flag")
        ]
        assert sorted(shown) == sorted((f"m-0-{f['message_index']}", f["kind"]) for f in flags)


def test_tool_errors_are_marked_and_a_limit_is_the_cause(browser: Any, tmp_path: Path):
    from selenium.webdriver.common.by import By

    source = shared_run(TRAJECTORIES / OPENAI)
    sim = next(
        s for s in load(source)["simulations"] if s["termination_reason"] == "too_many_errors"
    )
    errors = [i for i, m in enumerate(sim["messages"]) if m["role"] == "tool" and m.get("error")]
    assert len(errors) == 10
    page = write_report([source], tmp_path / "openai.html")
    _open(browser, page)
    _filter(browser, "f-termination", "too_many_errors")
    assert _visible_rows(browser) == [f"0:{_key(sim)}"]
    view = _show(browser, _key(sim))
    marked = view.find_elements(By.CSS_SELECTOR, ".msg.error")
    assert [m.get_attribute("id") for m in marked] == [f"m-0-{i}" for i in errors]
    assert all(m.find_element(By.CSS_SELECTOR, ".badge.error").text == "error" for m in marked)
    cause = view.find_element(By.CSS_SELECTOR, ".cause").text
    assert cause.startswith("10 tool errors; the run allowed 10 (Simulation terminated prematurely")
