"""What a message says, read once for the customer and the grader: figures (never ids, dates or
times), bag counts, a yes, an unhappy leave."""

from __future__ import annotations

import pytest

from airline_gym.domain.said import (
    LEAVE_UNSATISFIED,
    bag_counts,
    cabins,
    figure_equals,
    figures,
    is_yes,
    left_unsatisfied,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The total is $23,553.", (23553.0,)),
        ("The figure you asked about is 12.5.", (12.5,)),
        ("Flight HAT045 on 2024-05-20 leaves at 10:00 AM; reservation 4WQ150: $120", (120.0,)),
        ("gift_card_7815826 of mia_li_3668 holds 45 dollars", (45.0,)),
        ("on May 20, 2024 and 5/21/2024 at 3pm", ()),
        ("It is one of these: $100, $200, $300.", (100.0, 200.0, 300.0)),
        ("a refund of -$150, so $150 back", (150.0,)),
    ],
)
def test_figures_are_the_numbers_stated_never_ids_dates_or_times(
    text: str, expected: tuple
) -> None:
    assert figures(text) == expected


def test_a_figure_matches_its_communicate_string() -> None:
    assert figure_equals(1234.5, "1234.5") and figure_equals(23553.0, "23553")
    assert not figure_equals(23553.0, "2355") and not figure_equals(1.0, "one")


def test_bag_counts_and_cabins() -> None:
    assert bag_counts("Add two more bags, so 3 checked bags in total.") == frozenset({2, 3})
    assert bag_counts("no checked bags") == frozenset({0})
    assert cabins("from basic economy to business") == frozenset({"basic_economy", "business"})
    assert cabins("economy") == frozenset({"economy"})


@pytest.mark.parametrize(
    "text",
    [
        "Yes, please go ahead.",
        "My user id is mia_li_3668. Yes, I confirm.",
        "Sure, that works.",
        "As I said: Yes, please go ahead.",
        "That sounds good.",
    ],
)
def test_a_yes(text: str) -> None:
    assert is_yes(text)


@pytest.mark.parametrize(
    "text",
    ["No, that's not the flight I want.", "What exactly would you do?", "I understand.", ""],
)
def test_not_a_yes(text: str) -> None:
    assert not is_yes(text)


def test_every_way_the_customer_leaves_unhappy_is_read_as_such() -> None:
    assert all(
        left_unsatisfied(f"{why} Never mind, goodbye. ###STOP###") for why in LEAVE_UNSATISFIED
    )
    assert not left_unsatisfied("Thank you, that's everything I needed. ###STOP###")
    assert not left_unsatisfied("I understand. Never mind then, thank you. ###STOP###")
