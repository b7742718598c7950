"""Play one episode and show it: the transcript, the grade breakdown, the reward last.

Offline by default: the gold agent (the task's reference solution) against the scripted
customer. Switch either side to an LLM with a litellm model name.

  airline-gym demo
  airline-gym demo --task 18
  airline-gym demo --agent noop --task 0
  airline-gym demo --user-model gpt-4.1           # LLM customer (needs OPENAI_API_KEY)
  airline-gym demo --user-model openai/qwen --api-base http://localhost:8000/v1
  airline-gym demo --agent-model gpt-4.1 --user-model gpt-4.1
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, SupportsFloat

from airline_gym.agents.registry import BUILTIN_AGENTS
from airline_gym.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``airline-gym demo``."""
    parser.add_argument("--task", default="17", help="task id (default 17)")
    parser.add_argument("--tasks", default="tau2", help="'tau2' or a path to a tasks.json")
    parser.add_argument(
        "--agent", choices=BUILTIN_AGENTS, default="gold", help="built-in agent (default gold)"
    )
    parser.add_argument("--agent-model", help="litellm model for an LLM agent instead of --agent")
    parser.add_argument(
        "--user-model", help="litellm model for an LLM customer (default: scripted)"
    )
    parser.add_argument("--api-base", help="OpenAI-compatible base URL for the LLM side(s)")
    parser.add_argument("--api-key", help="API key for the LLM side(s) (default: from env)")
    parser.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    parser.add_argument("--max-steps", type=int, default=200, help="step budget (default 200)")
    parser.add_argument(
        "--no-colour", "--no-color", dest="no_colour", action="store_true", help="plain text output"
    )


def _agent(args: argparse.Namespace, env: Any) -> Any:
    from airline_gym import agents

    if args.agent_model:
        from airline_gym.cli.options import local_api_key

        key = local_api_key(args.agent_model, args.api_base, args.api_key)
        from airline_gym.cli.eval import AGENT_KEY_HINT
        from airline_gym.llm import check_credentials

        problem = check_credentials(args.agent_model, args.api_base, key, AGENT_KEY_HINT)
        if problem:
            raise agents.AgentError(f"the LLM agent cannot run: {problem}")
        return agents.LiteLLMAgent(args.agent_model, api_base=args.api_base, api_key=key)
    return {
        "gold": lambda: agents.GoldAgent(env.unwrapped.task_set),
        "noop": agents.NoOpAgent,
        "transfer": agents.TransferAgent,
        "random": lambda: agents.RandomAgent(seed=args.seed),
    }[args.agent]()


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym demo``."""
    import gymnasium as gym

    import airline_gym  # noqa: F401  (registers the envs)
    from airline_gym.agents import AgentError
    from airline_gym.cli.options import check_customer, local_api_key
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.env.render import transcript

    if args.max_steps < 1:
        raise ConfigError("--max-steps must be at least 1")
    user: dict[str, Any] = {"user": "scripted"}
    if args.user_model:
        llm_args = {"api_base": args.api_base} if args.api_base else {}
        key = local_api_key(args.user_model, args.api_base, args.api_key)
        if key:
            llm_args["api_key"] = key
        user = {"user": "llm", "user_model": args.user_model, "user_llm_args": llm_args}
    env = gym.make("Airline-v0", task=args.task, tasks=args.tasks, max_steps=args.max_steps, **user)
    check_customer(getattr(env.unwrapped, "user", None), "--api-base", "no --user-model")
    agent = _agent(args, env)
    obs, info = env.reset(seed=args.seed)
    agent.reset(info)
    airline = env.unwrapped
    assert isinstance(airline, AirlineEnv) and airline.episode is not None
    episode = airline.episode
    terminated = truncated = False
    reward: SupportsFloat = 0.0
    colour = not args.no_colour and sys.stdout.isatty()
    try:
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
    except AgentError:
        print(transcript(episode.messages, colour=colour))
        raise
    print(transcript(episode.messages, colour=colour))
    print_grade(info, float(reward))
    return 0


def print_grade(info: dict[str, Any], reward: float) -> None:
    """The grade breakdown of a finished episode, the reward last."""
    grade = info["reward_info"]
    print("\n--- grade " + "-" * 50)
    print(
        f"task {info['task_id']}  termination: {grade['termination_reason']}  "
        f"steps: {info['step_count']}  tool errors: {info['num_errors']}"
    )
    print(f"DB check: {'match' if grade['db_match'] else 'DIFFERS'}")
    for line in grade["db_diff_text"]:
        print(f"  {line}")
    for check in grade["communicate_checks"]:
        print(f"communicate {check['info']!r}: {'said' if check['met'] else 'NOT said'}")
    if grade["note"]:
        print(grade["note"])
    print(f"reward={reward}")
