"""The intent customer of a task is worked out once and copied per episode (``customer_for``):
two episodes of one task played at once, interleaved, each get the replies a lone episode gets.
Each copy has its own dialogue cursor, last answer and account (the episode's DB), so one
episode's messages never move another's customer on."""

from __future__ import annotations

from airline_gym.env.airline_env import AirlineEnv

TALK = (
    "Could you tell me your user id?",
    "Which reservation is it about?",
    "Is there anything else I can help you with?",
)


def _replies(envs: list[AirlineEnv]) -> list[list[str]]:
    said: list[list[str]] = [[] for _ in envs]
    for i, env in enumerate(envs):
        observation, _ = env.reset(seed=0, options={"task": "17"})
        said[i].append(observation[-1]["content"])
    for message in TALK:
        for i, env in enumerate(envs):
            observation, *_ = env.step(message)
            said[i].append(observation[-1]["content"])
    return said


def test_two_episodes_of_one_task_at_once_each_get_a_lone_episodes_replies() -> None:
    alone = _replies([AirlineEnv(user="scripted")])[0]
    first, second = _replies([AirlineEnv(user="scripted"), AirlineEnv(user="scripted")])
    assert first == second == alone, (alone, first, second)
    first_db = AirlineEnv(user="scripted")
    other = AirlineEnv(user="scripted")
    for env in (first_db, other):
        env.reset(seed=0, options={"task": "17"})
    players = [env.user.player for env in (first_db, other)]
    assert players[0] is not None and players[1] is not None
    assert players[0].db is not players[1].db  # each reads its own episode's account
