"""The flags several commands share, each with one meaning everywhere: the agent's model and
server, the customer's, one task or several; and the credentials check that names them.

==================  ==========================================  ===============================
flag                meaning (in every command that has it)      also spelt
==================  ==========================================  ===============================
--agent-model       litellm model of the LLM agent              --agent-llm (tau2 run)
--agent-api-base    the agent's OpenAI-compatible server        --api-base
--agent-api-key     the agent's API key                         --api-key
--user              scripted or llm customer
--user-model        litellm model of the LLM customer           --user-llm (tau2 run)
--user-api-base     the customer's OpenAI-compatible server
--user-api-key      the customer's API key
--task              one task's id (show also takes it bare)
--task-ids          several task ids (commas or spaces)
==================  ==========================================  ===============================
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from airline_gym.errors import ConfigError

__all__ = [
    "AGENT_KEY_HINT",
    "AGENT_MODEL_HELP",
    "JUDGE_KEY_HINT",
    "TASK_HELP",
    "TASK_IDS_HELP",
    "USER_API_BASE_HELP",
    "USER_API_KEY_HELP",
    "USER_HELP",
    "USER_KEY_HINT",
    "USER_MODEL_HELP",
    "add_agent_server_arguments",
    "add_customer_arguments",
    "add_no_agent_server_arguments",
    "add_task_ids_argument",
    "api_key",
    "check_customer",
    "check_model_credentials",
    "customer_kind",
    "refuse_agent_server",
    "task_ids",
]

#: The help of each flag shared by several commands: one flag, one meaning (a test checks that
#: every command's parser says the same; "(default ...)" may differ).
AGENT_MODEL_HELP = "litellm model of an LLM agent"
AGENT_API_BASE_HELP = "OpenAI-compatible URL of the agent's model"
AGENT_API_KEY_HELP = "API key for the agent's model (default: from env)"
USER_HELP = "the customer: scripted (offline) or llm (default llm when --user-model is given)"
USER_MODEL_HELP = "litellm model of the LLM customer (default gpt-4.1)"
USER_API_BASE_HELP = "OpenAI-compatible URL of the customer's model"
USER_API_KEY_HELP = "API key for the customer's model (default: from env)"
TASK_HELP = "one task's id, e.g. 17"
TASK_IDS_HELP = "task ids, comma- or space-separated, e.g. 1,2,3 (default: every task)"

#: The way out a credentials error names, per role, in this CLI's flags.
AGENT_KEY_HINT = (
    "or pass --agent-api-base URL for a local OpenAI-compatible server, or run offline with "
    "--agent gold or --agent noop instead of --agent-model"
)
USER_KEY_HINT = (
    "or pass --user-api-base URL for a local OpenAI-compatible server, or run offline with "
    "--user scripted"
)
JUDGE_KEY_HINT = (
    "or pass --judge-api-base URL for a local OpenAI-compatible server, or leave NL_ASSERTION "
    "out of --reward-basis"
)


_VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9_]*_(?:API_)?KEY")


def api_key(text: str) -> str:
    """An argparse type: the API key itself. A variable's name (``OPENAI_API_KEY``: what tau2
    run's ``--agent-api-key`` takes) is refused, naming the way to pass its value."""
    if _VARIABLE_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is a variable's name, not a key (tau2 run takes the name; here the key "
            f'itself: "${text}", or leave the flag out to read {text} from the environment)'
        )
    return text


def add_agent_server_arguments(group: argparse._ActionsContainer) -> None:
    """The LLM agent's server: ``--agent-api-base`` and ``--agent-api-key`` (``--api-base`` and
    ``--api-key`` are the same flags: the agent's, in every command)."""
    group.add_argument(
        "--agent-api-base", "--api-base", dest="agent_api_base", metavar="URL",
        help=AGENT_API_BASE_HELP,
    )  # fmt: skip
    group.add_argument(
        "--agent-api-key", "--api-key", dest="agent_api_key", metavar="KEY", type=api_key,
        help=AGENT_API_KEY_HELP,
    )  # fmt: skip


def add_customer_arguments(group: argparse._ActionsContainer) -> None:
    """The customer's options: ``--user``, ``--user-model`` (tau2 run's ``--user-llm``) and its
    server's ``--user-api-base`` and ``--user-api-key``."""
    group.add_argument("--user", choices=("scripted", "llm"), help=USER_HELP)
    group.add_argument(
        "--user-model", "--user-llm", dest="user_model", metavar="MODEL", help=USER_MODEL_HELP
    )
    group.add_argument("--user-api-base", metavar="URL", help=USER_API_BASE_HELP)
    group.add_argument("--user-api-key", metavar="KEY", type=api_key, help=USER_API_KEY_HELP)


def add_no_agent_server_arguments(parser: argparse._ActionsContainer) -> None:
    """``--api-base``/``--api-key`` in a command with no LLM agent (play): accepted only to
    refuse them with the customer's flags (they were the customer's here once)."""
    for flag in ("--agent-api-base", "--agent-api-key"):
        parser.add_argument(
            flag, flag.replace("agent-", ""), dest=flag[2:].replace("-", "_"),
            help=argparse.SUPPRESS,
        )  # fmt: skip


def refuse_agent_server(args: argparse.Namespace, why: str) -> None:
    """A ConfigError when ``--agent-api-base``/``--agent-api-key`` are given where ``why``."""
    if getattr(args, "agent_api_base", None) or getattr(args, "agent_api_key", None):
        raise ConfigError(
            f"--agent-api-base/--agent-api-key (also spelt --api-base/--api-key) are the LLM "
            f"agent's server: {why}; the customer's are --user-api-base/--user-api-key"
        )


def customer_kind(args: argparse.Namespace) -> str:
    """``--user``, else llm when ``--user-model`` is given, else scripted; a ConfigError when
    the scripted customer is given an LLM customer's settings."""
    kind = args.user or ("llm" if args.user_model else "scripted")
    if kind == "scripted" and (args.user_model or args.user_api_base or args.user_api_key):
        raise ConfigError("--user-model/--user-api-base/--user-api-key need --user llm")
    return str(kind)


def check_model_credentials(
    role: str, model: str, api_base: str | None, api_key: str | None, hint: str
) -> None:
    """A one-line ConfigError (bad input: exit 2) before anything runs when ``model`` has no
    credentials; ``role`` names the model, ``hint`` this CLI's way out. Known providers are
    told without importing litellm."""
    from airline_gym.llm import check_credentials

    problem = check_credentials(model, api_base, api_key, hint)
    if problem:
        raise ConfigError(f"the {role} cannot run: {problem}")


def check_customer(user: Any, hint: str = USER_KEY_HINT) -> None:
    """Fail before any episode when the LLM customer has no credentials (exit 2)."""
    from airline_gym.users import LLMUser

    if not isinstance(user, LLMUser):
        return
    model = user.chat_model  # before the first reset: the customer's settings as given
    check_model_credentials("LLM user simulator", user.model, model.api_base, model.api_key, hint)


def add_task_ids_argument(group: argparse._ActionsContainer) -> None:
    """``--task-ids``: several task ids, comma-separated (ours) or space-separated (tau2 run's)."""
    group.add_argument("--task-ids", nargs="+", metavar="IDS", help=TASK_IDS_HELP)


def task_ids(given: list[str] | str | None) -> list[str] | None:
    """The ids ``--task-ids`` names (None: not given); a ConfigError when it names none."""
    if given is None:
        return None
    texts = [given] if isinstance(given, str) else given
    ids = [t.strip() for text in texts for t in text.split(",") if t.strip()]
    if not ids:
        raise ConfigError(f"--task-ids: no task id in {' '.join(texts)!r}")
    return ids
