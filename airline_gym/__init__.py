"""airline-gym: a fast, faithful Gymnasium environment for the tau2-bench airline domain.

``import airline_gym`` registers ``Airline-v0`` (LLM customer) and ``AirlineScripted-v0``
(offline, deterministic customer)::

    import gymnasium as gym
    import airline_gym  # noqa: F401

    env = gym.make("AirlineScripted-v0", task=17)
"""

import logging

from airline_gym.env.registration import register_envs

__version__ = "0.1.0"

# Quiet by default: each module logs to logging.getLogger(__name__); nothing is shown until
# the application configures logging (or runs the CLI with -v).
logging.getLogger(__name__).addHandler(logging.NullHandler())

register_envs()
