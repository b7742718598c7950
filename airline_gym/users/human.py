"""A person at the terminal plays the customer."""

from __future__ import annotations

from collections.abc import Callable

from airline_gym.domain.prompts import STOP, scenario_text
from airline_gym.domain.tasks import Task
from airline_gym.users.base import Dialogue, UserSimulator

__all__ = ["HumanUser"]


class HumanUser(UserSimulator):
    """Shows the agent's messages on stdout and reads the customer's replies with ``input()``.

    An empty line is asked again; end of input (Ctrl-D) or Ctrl-C ends the conversation with
    ``###STOP###``. With ``show_scenario`` the task scenario is printed at :meth:`reset`.
    ``input_fn`` / ``output_fn`` replace ``input`` / ``print`` (e.g. in tests).
    """

    offline = True  # needs no network or API key

    def __init__(
        self,
        input_fn: Callable[[str], str] = input,
        output_fn: Callable[[str], object] = print,
        prompt: str = "customer> ",
        show_scenario: bool = True,
    ) -> None:
        self.input_fn = input_fn
        self.output_fn = output_fn
        self.prompt = prompt
        self.show_scenario = show_scenario
        self.task: Task | None = None

    def reset(self, task: Task, seed: int | None = None) -> None:
        """Show the scenario of ``task`` (when ``show_scenario``)."""
        self.task = task
        if self.show_scenario:
            self.output_fn(
                f"=== You are the customer (task {task.id}) ===\n{scenario_text(task)}\n"
                f"=== Type your replies; {STOP} (or Ctrl-D) ends the conversation ==="
            )

    def reply(self, dialogue: Dialogue) -> str:
        """Print the agent's latest message(s), then read a non-empty line."""
        start = max((i + 1 for i, m in enumerate(dialogue) if m.get("role") == "user"), default=0)
        for message in dialogue[start:]:
            if message.get("role") == "assistant" and message.get("content"):
                self.output_fn(f"agent> {message['content']}")
        while True:
            try:
                line = self.input_fn(self.prompt)
            except (EOFError, KeyboardInterrupt):
                return STOP
            if line.strip():
                return line.strip()
