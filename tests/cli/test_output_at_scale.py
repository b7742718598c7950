"""Output at scale stays readable (issue 27, F33): pass^k and its intervals at 40 trials wrap
at 100 columns with every k kept; ``regrade --summary`` prints no row per simulation."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from airline_gym.cli.main import main
from airline_gym.harness.evaluate import EvalConfig, evaluate
from airline_gym.harness.results import format_summary, summarize


def test_forty_trials_wrap_at_a_hundred_columns_and_keep_every_k() -> None:
    sims = [
        {"task_id": str(t), "trial": n, "reward_info": {"reward": float((t + n) % 3 == 0)}}
        for t in range(50)
        for n in range(40)
    ]
    text = format_summary(summarize({"info": {"num_trials": 40}, "simulations": sims}))
    assert max(len(line) for line in text.splitlines()) <= 100
    head = text.index("pass^k:")
    intervals = text.index("95% interval")
    ks = re.findall(r"k=(\d+): \d", text[head:intervals])
    assert ks == [str(k) for k in range(1, 41)]
    assert re.findall(r"k=(\d+): \[", text[intervals:]) == ks


def test_regrade_summary_prints_no_rows(tmp_path: Path) -> None:
    out = tmp_path / "noop.json"
    evaluate("noop", EvalConfig(task_ids=["0", "1", "2"], trials=2), out=out)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["regrade", str(out), "--summary"])
    assert code == 0
    assert stdout.getvalue() == ""
    assert stderr.getvalue().strip().splitlines()[-1] == "agreement: 6/6 simulations"
