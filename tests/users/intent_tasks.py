"""Hand-made tasks that carry intents, on real users and reservations of the DB (test data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from airline_gym.domain.decisions import Solution
from airline_gym.domain.intents import Intent, PaymentPart, Request
from airline_gym.taskgen.instructions import write_instructions

ISABELLA = "isabella_muller_2311"  # gold member; PGAGLM: business, one passenger, not flown
RAJ = "raj_muller_5942"  # 0Y69KK: business round trip, not insured

CANCEL = Intent(
    ISABELLA,
    "Isabella Muller",
    (Request("cancel", "PGAGLM", reason="change_of_plan"),),
    known={"reservation_ids": "PGAGLM"},
)
BAGS_THEN_CANCEL = Intent(
    ISABELLA,
    "Isabella Muller",
    (
        Request("add_bags", "PGAGLM", total_bags=3, payment=(PaymentPart("gift_card_4033665"),)),
        Request("cancel", "PGAGLM", reason="change_of_plan"),
    ),
    known={"reservation_ids": "PGAGLM"},
)
INSURANCE = Intent(
    RAJ,
    "Raj Muller",
    (Request("add_insurance", "0Y69KK", insist=1),),
    known={"reservation_ids": "0Y69KK"},
)
FORGETFUL = Intent(
    ISABELLA,
    "Isabella Muller",
    (Request("cancel", "PGAGLM", reason="change_of_plan"),),
    known={"reservation_ids": "PGAGLM", "dob": "1990-01-01"},
    unknown=("reservation_ids", "dob"),
)

#: (task id, intent, gold writes)
TASKS: tuple[tuple[str, Intent, list[tuple[str, dict[str, Any]]]], ...] = (
    ("cancel", CANCEL, [("cancel_reservation", {"reservation_id": "PGAGLM"})]),
    (
        "bags_then_cancel",
        BAGS_THEN_CANCEL,
        [
            (
                "update_reservation_baggages",
                {
                    "reservation_id": "PGAGLM",
                    "total_baggages": 3,
                    "nonfree_baggages": 0,
                    "payment_id": "gift_card_4033665",
                },
            ),
            ("cancel_reservation", {"reservation_id": "PGAGLM"}),
        ],
    ),
    ("insurance", INSURANCE, []),
    ("forgetful", FORGETFUL, [("cancel_reservation", {"reservation_id": "PGAGLM"})]),
)
DB_CHANGING = ("cancel", "bags_then_cancel", "forgetful")


def task_record(
    task_id: str, intent: Intent, writes: list[tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    """A tasks.json entry in tau2's format, with the intent under ``airline_gym``."""
    return {
        "id": task_id,
        "user_scenario": {
            "persona": None,
            "instructions": write_instructions(intent, Solution(())),
        },
        "evaluation_criteria": {
            "actions": [
                {"action_id": f"{task_id}_{i}", "name": name, "arguments": args, "info": None}
                for i, (name, args) in enumerate(writes)
            ],
            "communicate_info": [],
            "nl_assertions": [],
            "reward_basis": ["DB", "COMMUNICATE"],
        },
        "airline_gym": {"intent": intent.to_json()},
    }


def write_tasks(path: Path) -> Path:
    """Write :data:`TASKS` as a tasks.json at ``path``."""
    path.write_text(json.dumps([task_record(*t) for t in TASKS]), encoding="utf-8")
    return path
