"""``same_db`` agrees with the reference hash on -0.0 versus 0.0 (issue 11.6)."""

from __future__ import annotations

import pytest

from airline_gym.domain.database import same_db, same_json

USER = "mia_li_3668"


def _gift_card(db) -> str:
    methods = db.user(USER)["payment_methods"]
    return next(k for k, m in methods.items() if m["source"] in ("gift_card", "certificate"))


@pytest.mark.parametrize(("a", "b"), [(-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0), (0.0, 0)])
def test_same_db_matches_the_hash(base, a: float, b: float) -> None:
    one, two = base.fork(), base.fork()
    card = _gift_card(one)
    one.user_for_write(USER)["payment_methods"][card]["amount"] = a
    two.user_for_write(USER)["payment_methods"][card]["amount"] = b
    assert same_db(one, two) == (one.hash() == two.hash())


def test_same_json_on_signed_zeros_and_nan() -> None:
    assert not same_json(-0.0, 0.0)
    assert not same_json({"x": [0.0]}, {"x": [-0.0]})
    assert same_json(-0.0, -0.0) and same_json(float("nan"), float("nan"))
    assert not same_json(float("nan"), 0.0)
