"""Agents that see only what the env gives an agent: a policy-following one and the exploits an
optimiser would find (see :mod:`.agent` and :mod:`.exploits`)."""

from airline_gym.agents.policy.agent import PolicyAgent
from airline_gym.agents.policy.speech import Wording

__all__ = ["PolicyAgent", "Wording"]
