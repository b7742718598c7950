"""A refused reset changes nothing: not the RNG, not the episode (issue 17.15)."""

from __future__ import annotations

from typing import Any

import pytest
from gymnasium.utils import seeding

from airline_gym.env import AirlineEnv
from airline_gym.errors import AirlineGymError


def drawn_tasks(env: AirlineEnv, resets: int = 8) -> list[str]:
    return [env.reset()[1]["task_id"] for _ in range(resets)]


@pytest.mark.parametrize(
    ("seed", "options"),
    [
        (99, {"task": "999"}),
        (99, {"task": -1}),
        (99, {"taks": "5"}),
        (None, {"task": "nope"}),
    ],
)
def test_a_refused_reset_leaves_the_random_draws_alone(seed: Any, options: dict[str, Any]) -> None:
    plain, refused = AirlineEnv(user="scripted"), AirlineEnv(user="scripted")
    plain.reset(seed=7)
    refused.reset(seed=7)
    episode = refused.episode
    with pytest.raises(AirlineGymError):
        refused.reset(seed=seed, options=options)
    assert refused.episode is episode  # the running episode is untouched
    assert drawn_tasks(refused) == drawn_tasks(plain)


def test_a_reset_refused_for_missing_credentials_leaves_the_rng_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "AIRLINE_GYM_USER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    llm = AirlineEnv(user="llm", user_model="gpt-4.1")
    twin = AirlineEnv(user="llm", user_model="gpt-4.1")
    llm.np_random, twin.np_random = seeding.np_random(5)[0], seeding.np_random(5)[0]
    with pytest.raises(AirlineGymError):
        llm.reset(seed=123)
    assert (
        llm.np_random.integers(10**9, size=4).tolist()
        == twin.np_random.integers(10**9, size=4).tolist()
    )
