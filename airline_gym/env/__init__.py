"""The Gymnasium layer: the env, its episode loop, actions, spaces, rendering and registration.

``AirlineEnv`` is loaded on first use, so ``import airline_gym`` (which registers the env ids)
stays as light as gymnasium itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airline_gym.env.airline_env import AirlineEnv

__all__ = ["AirlineEnv"]


def __getattr__(name: str) -> Any:
    if name == "AirlineEnv":
        from airline_gym.env.airline_env import AirlineEnv

        return AirlineEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
