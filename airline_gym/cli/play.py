"""Be the airline agent yourself: serve the scripted (or an LLM) customer in the terminal.

The customer's messages are shown as "customer:"; tool results as "tool:". Each line you type
is one action:

  plain text                         a message to the customer (--protocol tool-reply: sent
                                     through respond_to_user)
  get_user_details(user_id='x')      a tool call (keyword arguments, Python or JSON values)
  {"name": "...", "arguments": {...}} a tool call as JSON
  :tools   list the tools and their arguments    :help   this help
  :done    end the conversation and see the grade (end of input does the same; the
           leaderboard protocol has no done: there it ends the session, graded as it stands)

Works with piped input, one action per line:

  airline-gym play --task 17
  airline-gym play --task 5 --show-task
  airline-gym play --task 5 --user-model gpt-4.1
  airline-gym play --task 5 --user-model openai/qwen --user-api-base http://localhost:8000/v1
  printf 'get_user_details(user_id="mia_li_3668")\\n:done\\n' | airline-gym play --task 17
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, TextIO

from airline_gym.cli.flags import (
    TASK_HELP,
    add_customer_arguments,
    add_no_agent_server_arguments,
    check_customer,
    customer_kind,
    refuse_agent_server,
)
from airline_gym.cli.options import add_benchmark_arguments, add_protocol_argument, server_args
from airline_gym.domain.grading import AGENT_STOP
from airline_gym.domain.tool_reply import RESPOND_TOOL
from airline_gym.domain.tools import TOOLS
from airline_gym.env.actions import DONE_TOOL, MAX_ACTION_CHARS
from airline_gym.env.render import colourise
from airline_gym.errors import ConfigError
from airline_gym.printable import printable

_CALL = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$", re.DOTALL)
_DOC = __doc__ or ""
HELP = _DOC[_DOC.find("  plain text") : _DOC.find("Works with")].rstrip()
PROMPT = "agent> "


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym play``."""
    parser.add_argument("--task", required=True, help=TASK_HELP)
    add_benchmark_arguments(parser)
    add_protocol_argument(parser)
    add_customer_arguments(parser)
    add_no_agent_server_arguments(parser)  # you are the agent: refused, naming --user-api-base
    parser.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    parser.add_argument("--max-steps", type=int, default=200, help="step budget (default 200)")
    parser.add_argument(
        "--show-task", action="store_true", help="print the customer's scenario first (spoiler)"
    )
    parser.add_argument(
        "--no-colour",
        "--no-color",
        dest="no_colour",
        action="store_true",
        help="plain text output (colour is used only on a terminal, never with NO_COLOR set)",
    )


def tool_lines(tools: list[dict[str, Any]]) -> list[str]:
    """``name(arg: type, ...)`` and the first line of the description, per tool."""
    lines = []
    for schema in tools:
        fn = schema["function"]
        params = fn.get("parameters") or {}
        required = set(params.get("required") or ())
        args = []
        for name, spec in (params.get("properties") or {}).items():
            kind = spec.get("type") or ("|".join(spec["enum"]) if "enum" in spec else "any")
            if "enum" in spec:
                kind = "|".join(map(str, spec["enum"]))
            args.append(f"{name}: {kind}" + ("" if name in required else " (optional)"))
        description = (fn.get("description") or "").strip().splitlines()
        lines.append(f"{fn['name']}({', '.join(args)})")
        if description:
            lines.append(f"    {description[0]}")
    return lines


def check_line(line: str) -> str | None:
    """Why a typed line would not do what it looks like (a typo'd tool, broken JSON), or None."""
    match = _CALL.match(line)
    if match and match.group(1) not in (*TOOLS, DONE_TOOL, RESPOND_TOOL):
        return f"unknown tool {match.group(1)!r}: type :tools for the list"
    if line.startswith("{"):
        try:
            data = json.loads(line)
        except ValueError as exc:
            return f'not valid JSON ({exc}); a tool call is {{"name": ..., "arguments": {{...}}}}'
        if not isinstance(data, dict) or "name" not in data:
            return 'a JSON tool call needs "name" (and "arguments")'
    return None


class LineTooLong(Exception):
    """A line of piped input longer than an action may be (read no further than the bound)."""


def read_line(stream: TextIO, limit: int = MAX_ACTION_CHARS) -> str:
    """The next line of ``stream`` without its newline, holding at most ``limit`` characters in
    memory: a longer line is skipped to its end and raises :class:`LineTooLong`; EOFError at the
    end of the input."""
    line = stream.readline(limit + 1)
    if line == "":
        raise EOFError
    if len(line) <= limit or line.endswith("\n"):
        return line.rstrip("\n")
    while True:  # the rest of the over-long line, a bounded piece at a time
        rest = stream.readline(1 << 16)
        if rest == "" or rest.endswith("\n"):
            raise LineTooLong


def show(messages: list[dict[str, Any]], colour: bool = False) -> None:
    """Print an observation: customer turns, tool results (as the agent sees them) and errors."""
    labels = {"user": "customer", "tool": "tool"}
    for message in messages:
        role = message["role"] if message["role"] in labels else "system"
        label = colourise(f"{labels.get(role, 'error')}:", role, colour)
        print(f"{label} {printable(message.get('content'), lines=True)}")


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym play``."""
    from airline_gym.cli.demo import print_grade
    from airline_gym.domain.prompts import scenario_text
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.harness.runner import step_safely

    if args.max_steps < 1:
        raise ConfigError("--max-steps must be at least 1")
    refuse_agent_server(args, "in play you are the agent")
    kind = customer_kind(args)
    llm_args: dict[str, Any] | None = None
    if kind == "llm":
        llm_args = server_args(args.user_model or "", args.user_api_base, args.user_api_key)
    env = AirlineEnv(
        task=args.task.strip(),
        tasks=args.tasks,
        benchmark=args.benchmark,
        user=kind,
        user_model=args.user_model,
        user_llm_args=llm_args,
        max_steps=args.max_steps,
        protocol=args.protocol,
    )
    check_customer(env.user)
    interactive = sys.stdin.isatty()
    colour = not args.no_colour and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    task = env.task_set[env.fixed_task or args.task]
    print(
        f"task {printable(task.id)}: you are the airline agent. Type :help for how to act, "
        ":done to end."
    )
    if args.show_task:
        print(printable(scenario_text(task), lines=True))
    obs, info = env.reset(seed=args.seed)
    show(obs, colour)
    episode = env.episode
    assert episode is not None
    reward = 0.0
    while not episode.done:
        try:
            line = input(PROMPT) if interactive else read_line(sys.stdin)
        except EOFError:
            print("(end of input: calling done)")
            line = ":done"
        except LineTooLong:
            print(f"not sent: a line longer than {MAX_ACTION_CHARS:,} characters (an action's max)")
            continue
        else:
            if not interactive:
                print(f"{PROMPT}{line}")
        line = line.strip()
        if not line:
            continue
        if line.startswith(":"):
            command = line[1:].strip().lower()
            if command in ("help", "h", "?"):
                print(HELP)
                continue
            if command == "tools":
                print("\n".join(tool_lines(env.tools)))
                continue
            if command not in ("done", "quit", "exit", "q"):
                print(f"unknown command {line!r}: try :help")
                continue
            if not env.protocol.offers_done:  # leaderboard: the session ends, graded as it stands
                obs, reward, _, _, info = env.abort("ended by the player", AGENT_STOP)
                show(obs, colour)
                continue
            action: Any = {"name": DONE_TOOL, "arguments": {}}
        else:
            problem = check_line(line)
            if problem:
                print(f"not sent: {problem}")
                continue
            action = line
            if env.protocol.reply_tool and not _CALL.match(line) and not line.startswith("{"):
                action = {"name": RESPOND_TOOL, "arguments": {"message": line}}
        obs, reward, _, _, info = step_safely(env, action, info)  # a crash ends the episode
        show(obs, colour)
    if "reward_info" not in info:  # the episode ended at reset (the customer failed)
        print(f"the episode ended before your first turn: {printable(info.get('error'))}")
        return 1
    print_grade(info, reward)
    return 0
