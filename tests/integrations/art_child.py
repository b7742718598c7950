"""Run by test_art.py with the Python of the ART venv (openpipe-art's ``art.tau_bench`` ships in
releases for Python >= 3.12; CI's main venv is 3.11, so ART lives in a venv of its own).

``python art_child.py SERVE_URL POLICY_URL``: runs the README's ART example (ART's own
``get_scenarios`` and ``rollout``) against ``airline-gym serve`` at SERVE_URL with the scripted
policy server at POLICY_URL, and prints each trajectory's reward and metrics (one JSON object).
``python art_child.py tau3 SERVE_URL POLICY_URL`` plays tau3's case instead (``main_tau3``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from readme_examples import readme_example, run_example

SERVE_URL = "http://127.0.0.1:8000"
POLICY_URL = "http://localhost:8001/v1"


def main(serve_url: str, policy_url: str) -> None:
    code = readme_example("art")
    assert code.count(SERVE_URL) == 1 and code.count(POLICY_URL) == 1
    code = code.replace(SERVE_URL, serve_url).replace(POLICY_URL, policy_url)
    namespace = run_example("art", code=code)
    out = {
        "scenarios": [s.task.id for s in namespace["scenarios"]],
        "trajectories": {
            t.metadata["scenario_id"]: {"reward": t.reward, "num_turns": t.metrics["num_turns"]}
            for t in namespace["trajectories"]
        },
    }
    print(json.dumps(out))


def main_tau3(serve_url: str, policy_url: str) -> None:
    """ART's rollout of task 7 on a ``--benchmark tau3`` server; its reward and turns."""
    import asyncio

    from art.tau_bench import TauBenchClient, get_scenarios, rollout

    async def play() -> object:
        client = TauBenchClient(base_url=serve_url)
        scenarios = await get_scenarios(domain="airline", split="base", client=client)
        (scenario,) = [s for s in scenarios if s.task.id == "7"]
        return await rollout(scenario, policy_url, "EMPTY", "policy", client=client)

    trajectory = asyncio.run(play())
    print(json.dumps({"reward": trajectory.reward, "num_turns": trajectory.metrics["num_turns"]}))


if __name__ == "__main__":
    if sys.argv[1] == "tau3":
        main_tau3(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2])
