"""``python -m airline_gym.cli``: the same as the ``airline-gym`` command."""

import sys

from airline_gym.cli.main import console

sys.exit(console())
