"""Control characters in a task file (ESC, BEL, CR, a C1 CSI, a right-to-left override in the id,
the purpose and the scenario) reach the terminal escaped, from every command that prints text of
the file: ``tasks``, ``show``, ``eval``'s progress and summary, ``audit``, ``warm-start``, ``play``,
``regrade`` (issue 35, item 10)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from airline_gym.printable import printable

#: What a terminal would act on: C0 controls but tab and newline, DEL, C1, bidi overrides.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
ID = "t\x1b[2J\x07\r\x9b31m\u202e0"
PURPOSE = "Purpose \x1b]0;pwned\x07 then \x1b[8mhidden"
REASON = "You want \x1b[31mred\x1b[0m things\r done."


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory, tau2_tasks: Any) -> Path:
    records = [tau2_tasks[i].raw for i in ("0", "1", "9")]
    for n, record in enumerate(records):
        record["id"] = f"{ID}{n}"
        record["description"]["purpose"] = PURPOSE
        record["user_scenario"]["instructions"]["reason_for_call"] = REASON
    path = tmp_path_factory.mktemp("ctl") / "tasks.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _clean(text: str, command: str) -> None:
    found = RAW.search(text)
    assert found is None, (command, found, text[max(0, found.start() - 80) : found.end() + 80])


def test_printable_escapes_what_a_terminal_acts_on() -> None:
    assert printable(ID) == "t\\x1b[2J\\x07\\r\\x9b31m\\u202e0"
    assert printable("a\nb\tc", lines=True) == "a\nb\tc"
    assert printable("a\nb\tc") == "a\\nb\\tc"


@pytest.mark.parametrize(
    "command",
    [
        ["tasks"],
        ["tasks", "--distribution"],
        ["show", f"{ID}1"],
        ["eval", "--agent", "gold", "--out", "{tmp}/r.json"],
        ["audit"],
        ["warm-start", "--out", "{tmp}/sft.jsonl", "--min-reward", "1"],
        ["play", "--task", f"{ID}2", "--show-task"],
    ],
)
def test_text_of_a_task_file_is_printed_escaped(
    command: list[str], tasks: Path, tmp_path: Path
) -> None:
    args = [a.format(tmp=tmp_path) for a in command]
    done = run_cli(*args, "--tasks", str(tasks), stdin=":done\n")
    assert "Traceback" not in done.stderr, done.stderr
    _clean(done.stdout, command[0])
    _clean(done.stderr, command[0])
    shown = done.stdout + done.stderr
    if command[0] in ("tasks", "eval", "audit", "warm-start", "play") and command[1:2] != [
        "--distribution"
    ]:
        assert "t\\x1b[2J\\x07\\r\\x9b31m\\u202e0" in shown, shown[-3000:]
    if command[0] in ("show", "play"):
        assert "You want \\x1b[31mred\\x1b[0m things\\r" in shown, shown[-3000:]
    if command[0] == "eval":
        regraded = run_cli("regrade", str(tmp_path / "r.json"))
        _clean(regraded.stdout + regraded.stderr, "regrade")
        assert "t\\x1b[2J" in regraded.stdout, regraded.stdout
