"""System prompts of the agent and of the simulated user, assembled as tau2-bench does (spec §6-§7).

The texts themselves (policy, agent instruction, user guidelines) are read from the fetched data
files at run time; only the wrapping lives here.
"""

from __future__ import annotations

import os
import textwrap
from functools import cache

from airline_gym.data import data_files
from airline_gym.data.limits import TEXT_MAX_BYTES, read_limited_text
from airline_gym.domain.benchmarks import DEFAULT_BENCHMARK, guidelines_path
from airline_gym.domain.tasks import Task
from airline_gym.errors import ConfigError

GREETING = "Hi! How can I help you today?"
STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
USER_STOP_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)


@cache
def _read(path: str) -> str:
    try:
        return read_limited_text(path, TEXT_MAX_BYTES, "text file")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc})") from None


def policy(data_dir: str | os.PathLike[str] | None = None) -> str:
    """The airline policy (policy.md) verbatim."""
    return _read(str(data_files(data_dir).policy))


def agent_system_prompt(data_dir: str | os.PathLike[str] | None = None) -> str:
    """The reference agent's system prompt: its instruction block plus the policy."""
    files = data_files(data_dir)
    return _agent_system_prompt(str(files.agent_instruction), str(files.policy))


@cache
def _agent_system_prompt(instruction_path: str, policy_path: str) -> str:
    # one string per data folder, shared by every env (it is ~8 KiB)
    return (
        f"<instructions>\n{_read(instruction_path)}\n</instructions>\n"
        f"<policy>\n{_read(policy_path)}\n</policy>"
    )


def scenario_text(task: Task) -> str:
    """The task's user scenario rendered like tau2's ``str(task.user_scenario)``."""
    tab = "\t"
    lines = []
    if task.persona is not None:
        lines += ["Persona:", textwrap.indent(task.persona, tab)]
    raw = task.raw["user_scenario"]["instructions"]
    if isinstance(raw, str):
        instructions = raw
    else:
        parts = [f"Domain: {raw['domain']}"]
        parts.append(f"Reason for call:\n{textwrap.indent(raw['reason_for_call'], tab)}")
        if raw.get("known_info") is not None:
            parts.append(f"Known info:\n{textwrap.indent(raw['known_info'], tab)}")
        if raw.get("unknown_info") is not None:
            parts.append(f"Unknown info:\n{textwrap.indent(raw['unknown_info'], tab)}")
        parts.append(f"Task instructions:\n{textwrap.indent(raw['task_instructions'], tab)}")
        instructions = "\n".join(parts)
    lines += ["Instructions:", textwrap.indent(instructions, tab)]
    return "\n".join(lines)


def user_system_prompt(
    task: Task, data_dir: str | os.PathLike[str] | None = None, benchmark: str = DEFAULT_BENCHMARK
) -> str:
    """The simulated user's system prompt: the benchmark's guidelines plus the task scenario."""
    guidelines = _read(str(guidelines_path(benchmark, data_dir)))
    return f"{guidelines}\n\n<scenario>\n{scenario_text(task)}\n</scenario>"


def is_user_stop(text: str | None) -> bool:
    """Whether a user message ends the conversation (case-sensitive, anywhere in the text)."""
    return bool(text) and any(token in text for token in USER_STOP_TOKENS)  # type: ignore[operator]
