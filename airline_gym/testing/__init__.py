"""Test helpers shipped with the package (e.g. a scriptable local OpenAI-compatible server)."""

from airline_gym.testing.openai_server import FAULTS, OpenAIServer, Reply

__all__ = ["FAULTS", "OpenAIServer", "Reply"]
