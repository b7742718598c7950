"""NaN and infinity in an LLM's settings are refused when the model is made, in one line.

Python reads ``nan``/``inf`` (and JSON's ``NaN``/``Infinity``) as floats; unchecked they reached
the server as ``NaN`` (not JSON) and the results file, and ``timeout=inf`` overflowed the timer
mid-episode. Each way in (the agent's, the customer's and the judge's settings, from Python and
from the CLI) is refused by :func:`airline_gym.numbers` before any request: the scripted server
on 127.0.0.1 is never asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from cli_runner import run_cli

import airline_gym  # noqa: F401  (registers the env ids)
from airline_gym.errors import ConfigError
from airline_gym.llm import LiteLLMChatModel
from airline_gym.testing import OpenAIServer, Reply

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"temperature": NAN}, "temperature must be a finite number; got nan"),
        ({"temperature": -INF}, "temperature must be a finite number; got -inf"),
        ({"timeout": INF}, "timeout must be a finite number of seconds > 0"),
        ({"timeout": NAN}, "timeout must be a finite number of seconds > 0"),
        ({"timeout": "10"}, "timeout must be a finite number of seconds > 0"),
        ({"top_p": NAN}, "top_p is nan"),
        ({"extra": {"logit_bias": {"50256": -INF}}}, "logit_bias['50256'] is -inf"),
        ({"stop": [1.0, complex(INF, 0)]}, "stop[1] is (inf+0j)"),
    ],
)
def test_a_model_with_a_non_finite_setting_is_refused(settings: dict[str, Any], said: str) -> None:
    with OpenAIServer(default=Reply("hi")) as server:
        with pytest.raises(ConfigError) as refused:
            LiteLLMChatModel.from_args("openai/m", {"api_base": server.base_url, **settings})
        assert server.requests == []
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_finite_settings_are_kept() -> None:
    model = LiteLLMChatModel.from_args(
        "openai/m", {"api_base": "http://127.0.0.1:9", "timeout": 5, "top_p": 0.9}
    )
    assert (model.timeout, model.extra) == (5, {"top_p": 0.9})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"user": "llm", "user_model": "openai/u", "user_llm_args": {"temperature": NAN}},
        {"user": "llm", "user_model": "openai/u", "user_llm_args": {"timeout": INF}},
        {"reward_basis": ["NL_ASSERTION"], "judge": "openai/j", "judge_llm_args": {"seed": INF}},
        {"reward_basis": ["NL_ASSERTION"], "judge": "openai/j", "judge_llm_args": {"x": [NAN]}},
    ],
    ids=["customer-temperature", "customer-timeout", "judge-seed", "judge-nested"],
)
def test_the_env_refuses_them_at_construction(kwargs: dict[str, Any]) -> None:
    with OpenAIServer(default=Reply("hi")) as server:
        role = "user_llm_args" if "user_llm_args" in kwargs else "judge_llm_args"
        kwargs[role] = {**kwargs[role], "api_base": server.base_url}
        with pytest.raises(ConfigError, match="finite"):
            gym.make("Airline-v0", task="0", **kwargs)
        assert server.requests == []


def run(*args: str) -> tuple[int, str]:
    """``airline-gym ARGS`` in this process: (exit code, stderr)."""
    done = run_cli(*args)
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--temperature", "nan"], "--temperature must be a finite number; got nan"),
        (["--temperature", "inf"], "--temperature must be a finite number; got inf"),
        (["--timeout", "inf"], "--timeout must be a finite number; got inf"),
        (["--llm-args", '{"top_p": NaN}'], "--llm-args: top_p is nan"),
        (["--user-llm-args", '{"extra": {"t": Infinity}}'], "--user-llm-args: extra['t'] is inf"),
    ],
)
def test_eval_refuses_them_in_one_line(option: list[str], said: str, tmp_path: Path) -> None:
    with OpenAIServer(default=Reply("hi")) as server:
        code, err = run(
            "eval", "--agent-model", "openai/a", "--api-base", server.base_url,
            "--user-model", "openai/u", "--user-api-base", server.base_url,
            "--task-ids", "0", "--out", str(tmp_path / "out.json"), *option,
        )  # fmt: skip
        assert server.requests == []
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and said in lines[0], err
    assert not (tmp_path / "out.json").exists()
