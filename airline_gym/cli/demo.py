"""Play one episode and show it: the transcript, the grade breakdown, the reward last.

Offline by default: the gold agent (the task's reference solution) against the scripted
customer. Switch either side to an LLM with a litellm model name.

  airline-gym demo
  airline-gym demo --task 18
  airline-gym demo --agent noop --task 0
  airline-gym demo --benchmark tau3 --task 7
  airline-gym demo --user-model gpt-4.1           # LLM customer (needs OPENAI_API_KEY)
  airline-gym demo --user-model openai/qwen --user-api-base http://localhost:8000/v1
  airline-gym demo --agent-model openai/qwen --agent-api-base http://localhost:8000/v1
  airline-gym demo --agent-model gpt-4.1 --user-model gpt-4.1
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, SupportsFloat

from airline_gym.agents.registry import BUILTIN_AGENTS
from airline_gym.cli.flags import (
    AGENT_KEY_HINT,
    AGENT_MODEL_HELP,
    TASK_HELP,
    add_agent_server_arguments,
    add_customer_arguments,
    check_customer,
    check_model_credentials,
    customer_kind,
    refuse_agent_server,
)
from airline_gym.cli.options import add_benchmark_arguments, local_api_key, server_args
from airline_gym.errors import AgentError, ConfigError
from airline_gym.printable import printable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym demo``."""
    parser.add_argument("--task", default="17", help=f"{TASK_HELP} (default 17)")
    add_benchmark_arguments(parser)
    parser.add_argument(
        "--agent", choices=BUILTIN_AGENTS, default="gold", help="built-in agent (default gold)"
    )
    parser.add_argument(
        "--agent-model", "--agent-llm", dest="agent_model", metavar="MODEL",
        help=f"{AGENT_MODEL_HELP}, instead of --agent",
    )  # fmt: skip
    add_agent_server_arguments(parser)
    add_customer_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    parser.add_argument("--max-steps", type=int, default=200, help="step budget (default 200)")
    parser.add_argument(
        "--no-colour", "--no-color", dest="no_colour", action="store_true", help="plain text output"
    )


def _agent(args: argparse.Namespace, task_set: Any) -> Any:
    """The agent ``args`` ask for; an LLM agent's credentials are checked before litellm is
    imported (a missing key is told at once)."""
    from airline_gym import agents

    if args.agent_model:
        return agents.LiteLLMAgent(
            args.agent_model, api_base=args.agent_api_base, api_key=_agent_key(args)
        )
    return agents.builtin_agent(args.agent, task_set, args.seed)


def _agent_key(args: argparse.Namespace) -> str | None:
    """The LLM agent's key (a local server's placeholder), once its credentials are checked."""
    key = local_api_key(args.agent_model, args.agent_api_base, args.agent_api_key)
    check_model_credentials("LLM agent", args.agent_model, args.agent_api_base, key, AGENT_KEY_HINT)
    return key


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym demo``."""
    if args.max_steps < 1:
        raise ConfigError("--max-steps must be at least 1")
    if args.agent_model:
        _agent_key(args)  # before the env and litellm load: a missing key is told at once
    else:
        refuse_agent_server(args, "they apply to --agent-model only")
    kind = customer_kind(args)
    user_llm_args: dict[str, Any] | None = None
    if kind == "llm":
        from airline_gym.users import DEFAULT_USER_MODEL

        model = args.user_model or DEFAULT_USER_MODEL
        user_llm_args = server_args(model, args.user_api_base, args.user_api_key)
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.env.render import transcript

    env = AirlineEnv(
        task=args.task.strip(),
        tasks=args.tasks,
        benchmark=args.benchmark,
        max_steps=args.max_steps,
        user=kind,
        user_model=args.user_model,
        user_llm_args=user_llm_args,
    )
    check_customer(env.user)
    agent = _agent(args, env.task_set)
    obs, info = env.reset(seed=args.seed)
    agent.reset(info)
    episode = env.episode
    assert episode is not None
    terminated, truncated = episode.done, False  # the customer may end it at reset
    reward: SupportsFloat = 0.0
    colour = not args.no_colour and sys.stdout.isatty()
    try:
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
    except AgentError:
        print(transcript(episode.messages, colour=colour, malformed=episode.malformed))
        raise
    print(transcript(episode.messages, colour=colour, malformed=episode.malformed))
    if "reward_info" not in info:  # the episode ended at reset (the customer failed)
        print(f"the episode ended before the agent's first turn: {printable(info.get('error'))}")
        return 1
    print_grade(info, float(reward))
    return 0


def print_grade(info: dict[str, Any], reward: float) -> None:
    """The grade breakdown of a finished episode, the reward last."""
    grade = info["reward_info"]
    print("\n--- grade " + "-" * 50)
    print(
        f"task {printable(info['task_id'])}  termination: {grade['termination_reason']}  "
        f"steps: {info['step_count']}  tool errors: {info['num_errors']}"
    )
    print(f"DB check: {'match' if grade['db_match'] else 'DIFFERS'}")
    for line in grade["db_diff_text"]:
        print(f"  {printable(line)}")
    for check in grade["communicate_checks"]:
        said = "said" if check["met"] else "NOT said"
        print(f"communicate {printable(repr(check['info']))}: {said}")
    if grade["note"]:
        print(printable(grade["note"]))
    print(f"reward={reward}")
