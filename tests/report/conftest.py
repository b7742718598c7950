"""Fixtures of the report's tests: a real leaderboard run, our own runs, a hostile copy, a
headless browser."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from optional_libs import missing
from report_runs import AIDE, HOSTILE, ODD_TASK_ID, load, shared_run


@pytest.fixture(scope="session")
def aide() -> Path:
    """The aide leaderboard submission: 50 tau2 tasks, 36 successes, embedded tasks."""
    return shared_run(AIDE)


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The aide run with HOSTILE in an agent reply, a tool argument, a tool result, the run
    info and task 5's termination reason, customer-audit flags on task 3's turns, and task 7
    renamed ODD_TASK_ID."""
    data = load(shared_run(AIDE))
    data["info"]["agent_info"]["llm"] = HOSTILE
    sim = next(s for s in data["simulations"] if s["task_id"] == "3")
    sim["messages"][2]["content"] = "Sure. " + HOSTILE + " Anything else?"
    call_message = next(m for m in sim["messages"] if m.get("tool_calls"))
    call_message["tool_calls"][0]["arguments"]["note"] = HOSTILE
    tool = next(m for m in sim["messages"] if m["role"] == "tool")
    tool["content"] = HOSTILE
    sim["user_audit"] = [
        {"kind": "leak", "message_index": 1, "evidence": "customer quoted its instructions"},
        {"kind": "premature_stop", "message_index": 3, "evidence": "stopped before <b>the end</b>"},
    ]
    other = next(s for s in data["simulations"] if s["task_id"] == "5")
    other["termination_reason"] = HOSTILE
    odd = next(s for s in data["simulations"] if s["task_id"] == "7")
    odd["task_id"] = ODD_TASK_ID
    out = tmp_path_factory.mktemp("hostile") / "hostile.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def own_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two runs of our own eval on six tasks, two trials (scripted customer): the gold agent,
    and a do-nothing agent (some tasks flip)."""
    from airline_gym.harness.evaluate import EvalConfig, evaluate

    folder = tmp_path_factory.mktemp("own")
    config = EvalConfig(task_ids=["0", "1", "3", "5", "14", "20"], trials=2, user="scripted")
    paths = []
    for agent in ("gold", "noop"):
        path = folder / f"{agent}.json"
        evaluate(agent, copy.deepcopy(config), out=path)
        paths.append(path)
    return paths[0], paths[1]


# --- a real browser ------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Debian chromium driven by Selenium. Skipped when absent, except in CI (which
    installs chromium, chromium-driver and selenium): a missing one fails there."""
    from airline_gym.testing.browser import headless_chromium
    from airline_gym.testing.browser import missing as browser_missing

    reason = browser_missing()
    if reason is not None:
        missing(reason)  # a skip; under CI (which installs them) a failure
    driver = headless_chromium()
    try:
        yield driver
    finally:
        driver.quit()
