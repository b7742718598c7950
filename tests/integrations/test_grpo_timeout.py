"""examples/grpo_rollouts.py --timeout: a policy server that never answers cannot hold a run."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from airline_gym.testing import OpenAIServer, Reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grpo_rollouts.py"


def test_timeout_bounds_every_policy_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    spec = importlib.util.spec_from_file_location("grpo_rollouts_timeout", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    out = tmp_path / "rollouts.jsonl"
    with OpenAIServer(default=Reply(fault="hang", hang_seconds=60)) as server:
        argv = ["--model", "openai/policy", "--api-base", server.base_url, "--task-ids", "3"]
        argv += ["--group-size", "1", "--timeout", "0.3", "--out", str(out)]
        start = time.monotonic()
        code = example.main(argv)
        elapsed = time.monotonic() - start
        requests = len(server.requests)
    assert code == 1 and 1 <= requests <= 4  # (a request cut early may not be read yet)
    assert elapsed < 30  # without --timeout it would wait for the server's 60 s hang
    err = capsys.readouterr().err
    assert "timeout (0.3 s)" in err and "after 4 attempts" in err  # 3 retries, each cut
    sys.modules.pop("grpo_rollouts_timeout", None)
