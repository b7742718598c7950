"""Every row of the report opens its own simulation, whatever its task id holds (issue 27,
B14: a newline, a tab, "%20" beside a task "a b"), and a simulation whose NL judge failed says
so on its page (B6). In a real browser (headless Debian chromium)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.report import write_report

TIMEOUT = 60
ODD_IDS = ["line\nbreak", "tab\there", "a%20b", "a b", "100%", "x-trial-3"]


def _wait(browser: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, TIMEOUT).until(condition)


def _open(browser: Any, page: Path) -> None:
    browser.get("about:blank")
    browser.get(page.as_uri())
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")


def _rendered(browser: Any) -> str | None:
    return browser.execute_script(
        "return document.getElementById('sim-view').getAttribute('data-rendered')"
    )


@pytest.fixture(scope="module")
def odd_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("odd")
    out = folder / "run.json"
    evaluate("noop", EvalConfig(task_ids=[str(i) for i in range(len(ODD_IDS))]), out=out)
    data = json.loads(out.read_text())
    for sim, odd in zip(data["simulations"], ODD_IDS, strict=True):
        sim["task_id"] = odd
    data["simulations"][0]["reward_info"]["info"]["nl"] = {"error": "NL judge failed 3 time(s)"}
    out.write_text(json.dumps(data), encoding="utf-8")
    return write_report([out], folder / "run.html")


def test_every_row_opens_its_own_simulation(browser: Any, odd_page: Path) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, odd_page)
    opened = []
    for n in range(len(ODD_IDS)):
        browser.execute_script("location.hash = ''")
        _wait(browser, lambda d: d.find_element(By.ID, "list-view").is_displayed())
        row = browser.find_elements(By.CSS_SELECTOR, "#sim-list tbody tr")[n]
        task = browser.execute_script("return arguments[0].dataset.key", row)
        row.find_element(By.TAG_NAME, "a").click()
        _wait(browser, lambda d, key=task: _rendered(d) == key)
        title = browser.find_element(By.ID, "sim-title").get_attribute("textContent")
        panes = browser.find_elements(By.CSS_SELECTOR, "#sim-panes .pane")
        assert len(panes) == 1, title
        opened.append((task, title))
    assert [key for key, _ in opened] == [f"task-{t}-trial-0" for t in ODD_IDS]
    assert [title for _, title in opened] == [f"task {t}, trial 0" for t in ODD_IDS]


def test_grid_cells_open_their_own_simulation(browser: Any, odd_page: Path) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, odd_page)
    seen = []
    for n in range(len(ODD_IDS)):
        browser.execute_script("location.hash = ''")
        _wait(browser, lambda d: d.find_element(By.ID, "list-view").is_displayed())
        line = browser.find_elements(By.CSS_SELECTOR, ".grid .task-cells")[n]
        task = line.find_element(By.CLASS_NAME, "task-id").get_attribute("textContent")
        browser.execute_script("arguments[0].click()", line.find_element(By.CSS_SELECTOR, "a"))
        _wait(browser, lambda d, key=f"task-{task}-trial-0": _rendered(d) == key)
        seen.append(task)
    assert sorted(seen) == sorted(ODD_IDS)


def test_a_failed_judge_is_shown_on_its_simulation(browser: Any, odd_page: Path) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, odd_page)
    overview = browser.find_element(By.CSS_SELECTOR, "[data-figure=judge_failures]").text
    assert overview.startswith("NL judge failures: 1 simulation have no verdict")
    row = browser.find_elements(By.CSS_SELECTOR, "#sim-list tbody tr")[0]
    assert row.find_element(By.CSS_SELECTOR, "td.reward").text == "no verdict (judge failed)"
    row.find_element(By.TAG_NAME, "a").click()
    _wait(browser, lambda d: _rendered(d) == f"task-{ODD_IDS[0]}-trial-0")
    judge = browser.find_element(By.CSS_SELECTOR, "#sim-panes td.judge-error").text
    assert "failed, no verdict" in judge and "NL judge failed 3 time(s)" in judge
