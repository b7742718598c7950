"""The ``airline-gym`` command line: ``main`` dispatches to one module per command."""

from airline_gym.cli.main import main

__all__ = ["main"]
