"""Repository-wide pytest setup: the package's doctests skip modules whose extra is absent.

``python -m pytest --doctest-modules airline_gym`` imports every module; the few that import
an optional library at module level are left out when that library is not installed.
"""

from __future__ import annotations

import importlib.util

#: Module (relative to the repository) -> the optional library it imports at module level.
_NEEDS = {
    "airline_gym/integrations/ray_rollouts.py": "ray",
    "airline_gym/integrations/verifiers.py": "verifiers",
}

collect_ignore = [
    path for path, module in _NEEDS.items() if importlib.util.find_spec(module) is None
]
