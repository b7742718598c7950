"""The verifiers plugin of airline-gym: ``vf-eval airline-gym-verifiers -m MODEL``.

verifiers' loader turns the taskset id ``airline-gym-verifiers`` into this module and takes
the taskset, the harness and the env it exports (``__all__``). They live in
:mod:`airline_gym.integrations.verifiers`; needs ``pip install 'airline-gym[verifiers]'``.
"""

from airline_gym.integrations.verifiers import AirlineEpisodes, AirlineHarness, AirlineTaskset

__all__ = ["AirlineEpisodes", "AirlineHarness", "AirlineTaskset"]
