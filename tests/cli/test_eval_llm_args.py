"""``eval --max-tokens/--llm-args/--user-llm-args`` reach the wire (real HTTP on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from airline_gym.cli.main import main
from airline_gym.testing import OpenAIServer, Reply


def test_llm_arguments_reach_agent_and_customer(tmp_path: Path) -> None:
    customer = [Reply("Hi, I'm omar_rossi_1241."), Reply("Thanks! ###STOP###")]
    with OpenAIServer(customer) as users, OpenAIServer(default=Reply("Anything else?")) as llm:
        argv = ["eval", "--agent-model", "openai/agent", "--api-base", llm.base_url]
        argv += ["--user-model", "openai/customer", "--user-api-base", users.base_url]
        argv += ["--task-ids", "17", "--max-tokens", "64", "--llm-args", '{"top_p": 0.5}']
        argv += ["--user-llm-args", '{"max_tokens": 32, "stop": ["###STOP###"]}']
        code = main([*argv, "--out", str(tmp_path / "run.json")])
    assert code == 0
    assert llm.requests and users.requests
    assert all(r["max_tokens"] == 64 and r["top_p"] == 0.5 for r in llm.requests)
    assert all(r["max_tokens"] == 32 and r["stop"] == ["###STOP###"] for r in users.requests)
    assert not any("top_p" in r for r in users.requests)


@pytest.mark.parametrize("bad", ["[1, 2]", "{oops", '"text"'])
def test_llm_args_must_be_a_json_object(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        argv = ["eval", "--agent-model", "openai/x", "--api-base", "http://127.0.0.1:9/v1"]
        main([*argv, "--llm-args", bad])
    assert exit_.value.code == 2
    assert "--llm-args" in capsys.readouterr().err
