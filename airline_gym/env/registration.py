"""The one place that knows the env ids and their default arguments.

``envs/<id>.json`` holds each registered spec as ``EnvSpec.to_json()`` writes it; a test checks
the files against the registry both ways, so a default cannot change without a version bump.
"""

from __future__ import annotations

import gymnasium as gym

ENTRY_POINT = "airline_gym.env:AirlineEnv"

ENV_SPECS: dict[str, dict[str, object]] = {
    # The headline env: an LLM customer (gpt-4.1 by default, any litellm model).
    "Airline-v0": {"kwargs": {"user": "llm"}, "nondeterministic": True},
    # Offline and deterministic: the scripted customer; what CI, check_env and quickstarts use.
    "AirlineScripted-v0": {"kwargs": {"user": "scripted"}, "nondeterministic": False},
}


def register_envs() -> None:
    """Register every airline env id with gymnasium (idempotent)."""
    for env_id, spec in ENV_SPECS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=ENTRY_POINT,
            kwargs=dict(spec["kwargs"]),  # type: ignore[call-overload]
            nondeterministic=bool(spec["nondeterministic"]),
        )
