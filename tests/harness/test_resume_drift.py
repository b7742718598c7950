"""``eval --resume`` refuses other sampling settings (a real LLM agent on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from airline_gym.cli.main import main
from airline_gym.harness.results import Results
from airline_gym.testing import OpenAIServer, Reply

CUSTOMER = [Reply("Hi, I'm omar_rossi_1241."), Reply("Thanks! ###STOP###")]


def _eval(agent_url: str, user_url: str, out: Path, *extra: str) -> list[str]:
    argv = ["eval", "--agent-model", "openai/agent", "--api-base", agent_url, "--task-ids", "17"]
    argv += ["--user-model", "openai/customer", "--user-api-base", user_url]
    return [*argv, "--max-steps", "4", "--out", str(out), *extra]


@pytest.mark.parametrize(
    ("first", "then", "says"),
    [
        ([], ["--temperature", "0.5"], "the agent's temperature 0.0, this run has 0.5"),
        (["--max-tokens", "64"], ["--max-tokens", "65"], "the agent's max_tokens 64, this run"),
        ([], ["--llm-args", '{"top_p": 0.9}'], "the agent's top_p unset, this run has 0.9"),
        (["--timeout", "30"], [], "the agent's timeout 30.0, this run has unset"),
        ([], ["--user-llm-args", '{"stop": ["x"]}'], "the customer's stop unset, this run"),
    ],
)
def test_resume_with_other_sampling_settings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: list[str], then: list[str], says: str
) -> None:
    out = tmp_path / "run.json"
    with (
        OpenAIServer(default=Reply("Anything else?")) as agent,
        OpenAIServer(CUSTOMER * 4) as users,
    ):
        assert main(_eval(agent.base_url, users.base_url, out, *first)) == 0
        before = out.read_bytes()
        capsys.readouterr()
        requests = len(agent.requests)
        code = main(_eval(agent.base_url, users.base_url, out, *then, "--trials", "2", "--resume"))
        assert code == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith(f"airline-gym eval: error: cannot resume {out}: it was run with ")
        assert says in error and "\n" not in error
        assert len(agent.requests) == requests and out.read_bytes() == before  # nothing ran
        # the same settings resume: the second trial is played and the file holds both
        assert (
            main(_eval(agent.base_url, users.base_url, out, *first, "--trials", "2", "--resume"))
            == 0
        )
    assert sorted(s["trial"] for s in Results.load(out).simulations) == [0, 1]
