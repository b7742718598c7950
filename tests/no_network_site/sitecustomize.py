"""Installs the tests' network guard (``tests/no_network.py``) in every Python child process.

conftest puts this folder on the children's ``PYTHONPATH``; Python imports ``sitecustomize`` at
start-up. Then the next ``sitecustomize`` on the path (a venv's or the system's), if any, runs
as it would have.
"""

from __future__ import annotations

import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name: str, path: str) -> None:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


_load("_airline_gym_no_network", os.path.join(os.path.dirname(_HERE), "no_network.py"))
sys.modules["_airline_gym_no_network"].install()
for _entry in sys.path:
    _other = os.path.join(_entry or ".", "sitecustomize.py")
    if os.path.abspath(_entry or ".") != _HERE and os.path.isfile(_other):
        _load("_airline_gym_next_sitecustomize", _other)
        break
