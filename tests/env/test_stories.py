"""Five stories from published tau2-bench runs of real models, replayed through the env.

The tests script the agent's side; the customer is the offline scripted user.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import airline_gym  # noqa: F401
from airline_gym.agents import DONE, text_message, tool_call_message

T17_FLIGHTS = [
    {"flight_number": "HAT056", "date": "2024-05-25"},
    {"flight_number": "HAT138", "date": "2024-05-25"},
]
T18_DOWNGRADES = [
    ("JG7FMM", [("HAT028", "2024-05-21"), ("HAT277", "2024-05-21")], "credit_card_2929732"),
    (
        "2FBBAH",
        [
            ("HAT080", "2024-05-28"),
            ("HAT076", "2024-05-28"),
            ("HAT255", "2024-05-30"),
            ("HAT148", "2024-05-30"),
        ],
        "gift_card_3481935",
    ),
    ("X7BYG1", [("HAT232", "2024-05-24"), ("HAT228", "2024-05-24")], "credit_card_2929732"),
    ("EQ1G6C", [("HAT084", "2024-05-23"), ("HAT175", "2024-05-23")], "gift_card_6847880"),
    ("BOH180", [("HAT276", "2024-05-21"), ("HAT279", "2024-05-22")], "credit_card_9525117"),
]


def call(name: str, i: int = 0, **arguments):
    return tool_call_message(name, arguments, f"{name}_{i}")


def play(task, actions, **kwargs):
    """Play the actions, then done; return (reward, terminated, truncated, info, trace)."""
    env = gym.make("AirlineScripted-v0", task=task, **kwargs)
    obs, info = env.reset(seed=0)
    trace = [obs]
    for action in [*actions, DONE]:
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append(obs)
        if terminated or truncated:
            return reward, terminated, truncated, info, trace
    raise AssertionError("the episode did not end")


def test_story_task17__three_changes_with_the_gift_card_match_the_gold_db():
    actions = [
        call("get_user_details", user_id="omar_rossi_1241"),
        *[
            call("get_reservation_details", i, reservation_id=r)
            for i, r in enumerate(["UM3OG5", "5RJ7UH", "FQ8APE"])
        ],
        text_message(
            "I found FQ8APE (EWR to ORD on May 25). I will change the passenger to Omar "
            "Rossi, upgrade to economy and add 3 checked bags (free for gold members), "
            "paying with gift card gift_card_8190333. Shall I proceed?"
        ),
        call(
            "update_reservation_flights",
            reservation_id="FQ8APE",
            cabin="economy",
            flights=T17_FLIGHTS,
            payment_id="gift_card_8190333",
        ),
        call(
            "update_reservation_passengers",
            reservation_id="FQ8APE",
            passengers=[{"first_name": "Omar", "last_name": "Rossi", "dob": "1970-06-06"}],
        ),
        call(
            "update_reservation_baggages",
            reservation_id="FQ8APE",
            total_baggages=3,
            nonfree_baggages=0,
            payment_id="gift_card_8190333",
        ),
    ]
    reward, terminated, truncated, info, trace = play(17, actions)
    assert "omar_rossi_1241" in trace[0][0]["content"]  # the customer opens with what it knows
    confirmation = trace[5][0]
    assert confirmation["role"] == "user" and "yes" in confirmation["content"].lower()
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["termination_reason"] == "agent_stop"
    assert info["reward_info"]["db_match"] is True and info["num_errors"] == 0


@pytest.mark.parametrize("refuse", [False, True])
def test_story_task0__cancelling_a_non_refundable_booking_fails(refuse):
    if refuse:
        actions = [
            call("get_reservation_details", reservation_id="EHGLP3"),
            text_message(
                "I'm sorry, this basic economy booking was made more than 24 hours ago "
                "and has no insurance, so it cannot be cancelled for a refund."
            ),
        ]
    else:
        actions = [
            call("get_reservation_details", reservation_id="EHGLP3"),
            call("cancel_reservation", reservation_id="EHGLP3"),
            text_message("Reservation EHGLP3 is cancelled; $208 will be refunded in 5-7 days."),
        ]
    reward, _, _, info, _ = play(0, actions)
    assert reward == float(refuse)
    assert info["reward_info"]["db_match"] is refuse
    if not refuse:
        diff = info["reward_info"]["db_diff_text"]
        assert any(d.startswith("reservations[EHGLP3].status") for d in diff)


@pytest.mark.parametrize(("said", "expected"), [("$14,965", 0.0), ("$23,553", 1.0)])
def test_story_task18__right_downgrades_wrong_total_fails_communicate(said, expected):
    actions = [
        call(
            "update_reservation_flights",
            i,
            reservation_id=r,
            cabin="economy",
            flights=[{"flight_number": n, "date": d} for n, d in legs],
            payment_id=pay,
        )
        for i, (r, legs, pay) in enumerate(T18_DOWNGRADES)
    ]
    actions.append(
        text_message(f"All five reservations are now economy. You saved {said} in total.")
    )
    reward, _, _, info, _ = play(18, actions)
    grade = info["reward_info"]
    assert grade["db_match"] is True
    assert grade["communicate_checks"] == [
        {
            "info": "23553",
            "met": expected == 1.0,
            "message_index": grade["communicate_checks"][0]["message_index"],
        }
    ]
    assert reward == expected


def test_story_task11__invented_arguments_and_repeated_refusals_score_zero():
    one_passenger = [{"first_name": "James", "last_name": "Patel", "dob": "1980-01-01"}]
    actions = [
        call(
            "update_reservation_passengers",
            reservation_id="ABC123",
            passengers=[{"first_name": "John", "last_name": "Doe", "dob": "1990-01-01"}],
        ),
        *[
            call(
                "update_reservation_passengers",
                i,
                reservation_id="GV1N64",
                passengers=one_passenger,
            )
            for i in range(5)
        ],
        text_message("I can offer you a $200 refund for the trouble."),
    ]
    reward, terminated, truncated, info, trace = play(11, actions)
    assert trace[1] == [
        {
            "role": "tool",
            "tool_call_id": "update_reservation_passengers_0",
            "content": "Error: Reservation ABC123 not found",
        }
    ]
    for obs in trace[2:7]:
        assert obs[0]["content"] == "Error: Number of passengers does not match"
    assert info["num_errors"] == 6
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["reward_info"]["db_match"] is False


BAD_BOOKING = dict(
    user_id="mohamed_silva_9265",
    origin="JFK",
    destination="SFO",
    flight_type="round_trip",
    cabin="business",
    flights=[
        {"flight_number": "HAT023", "date": "2024-05-26"},
        {"flight_number": "HAT204", "date": "2024-05-28"},
        {"flight_number": "HAT100", "date": "2024-05-28"},
    ],
    passengers=[
        {"first_name": "Mohamed", "last_name": "Silva", "dob": "1960-11-26"},
        {"first_name": "Raj", "last_name": "Sanchez", "dob": "1986-09-12"},
        {"first_name": "Liam", "last_name": "Wilson", "dob": "1980-03-27"},
    ],
    payment_methods=[
        {"payment_id": "certificate_3765853", "amount": 500},
        {"payment_id": "credit_card_2198526", "amount": 1000},
    ],
    total_baggages=0,
    nonfree_baggages=0,
    insurance="no",
)


@pytest.mark.parametrize(
    ("max_errors", "reason", "steps"), [(10, "too_many_errors", 21), (1000, "max_steps", 201)]
)
def test_story_task14__repeating_a_booking_that_does_not_add_up_ends_truncated(
    max_errors, reason, steps
):
    env = gym.make("AirlineScripted-v0", task=14, max_errors=max_errors)
    env.reset(seed=0)
    errors = set()
    for i in range(1000):
        obs, reward, terminated, truncated, info = env.step(
            call("book_reservation", i, **BAD_BOOKING)
        )
        errors.add(obs[0]["content"])
        if terminated or truncated:
            break
    assert errors == {"Error: Payment amount does not add up, total price is 2613, but paid 1500"}
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["termination_reason"] == reason
    # the user's first message is step 1; each failed booking costs an agent step and a tool
    # step, and limits are checked only after the tool step (so max_steps ends at 201, as tau2)
    assert info["step_count"] == steps
