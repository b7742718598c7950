"""The tau-bench routes of ``airline-gym serve`` (ART's protocol), over HTTP with FastAPI's client.

ART's own client plays whole episodes in test_art.py; here each route's answers and refusals.
"""

from __future__ import annotations

from extras import require

require("fastapi", "httpx")

from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from airline_gym.integrations.tau_bench_server import add_tau_bench_routes  # noqa: E402


def client(max_environments: int = 4, **env_kwargs) -> tuple[TestClient, object]:
    app = FastAPI()
    environments = add_tau_bench_routes(app, max_environments, 600.0, user="scripted", **env_kwargs)
    return TestClient(app), environments


def test_scenarios_list_a_split_and_refuse_others():
    http, _ = client()
    base = http.get("/scenarios", params={"domain": "airline"}).json()["scenarios"]
    assert len(base) == 50 and base[0] == {"domain": "airline", "task": {"id": "0"}}
    test = http.get("/scenarios", params={"split": "test"}).json()["scenarios"]
    assert 0 < len(test) < 50
    assert http.get("/scenarios", params={"domain": "retail"}).status_code == 404
    refused = http.get("/scenarios", params={"split": "nope"})
    assert refused.status_code == 400 and "nope" in refused.json()["detail"]


def test_an_episode_over_the_routes(tau2_tasks):
    http, environments = client()
    created = http.post("/environments", json={"domain": "airline", "task_id": "17"}).json()
    assert created["observation"].startswith("user: ")
    assert created["info"]["policy"] and created["info"]["tools"]
    assert created["info"]["user_simulator"] == "ScriptedUser"
    url = f"/environments/{created['id']}/step"
    said = http.post(url, json={"action": "Let me check."}).json()
    assert said["observation"].startswith("user: ") and said["reward"] == 0.0
    for action in tau2_tasks["17"].actions:
        arguments = ", ".join(f"{k}={v!r}" for k, v in action.arguments.items())
        step = http.post(url, json={"action": f"{action.name}({arguments})"}).json()
        assert step["observation"].startswith("tool: ") and not step["terminated"]
        assert not step["observation"].startswith("tool: Error")
    last = http.post(url, json={"action": "done()"}).json()
    assert last["terminated"] and not last["truncated"] and last["reward"] == 1.0
    assert last["info"]["termination_reason"] == "agent_stop"
    assert last["info"]["reward_info"]["reward"] == 1.0
    assert http.delete(f"/environments/{created['id']}").json() == {
        "id": created["id"],
        "deleted": True,
    }
    assert http.post(url, json={"action": "done()"}).status_code == 404
    assert not environments.live


def test_a_truncated_episode_is_terminated_for_art():
    http, _ = client(max_steps=4)
    env_id = http.post("/environments", json={"domain": "airline", "task_id": "17"}).json()["id"]
    for _ in range(4):
        step = http.post(f"/environments/{env_id}/step", json={"action": "list_all_airports()"})
        if step.json()["terminated"]:
            break
    body = step.json()
    assert body["terminated"] and body["truncated"] and body["reward"] == 0.0
    assert body["info"]["termination_reason"] == "max_steps"


def test_refusals_are_clear():
    http, environments = client(max_environments=1)
    unknown = http.post("/environments", json={"domain": "airline", "task_id": "999"})
    assert unknown.status_code == 404 and "999" in unknown.json()["detail"]
    assert http.post("/environments", json={"domain": "telecom", "task_id": "1"}).status_code == 404
    assert http.post("/environments", json={"task_id": "1"}).status_code == 422
    first = http.post("/environments", json={"domain": "airline", "task_id": "1"}).json()["id"]
    full = http.post("/environments", json={"domain": "airline", "task_id": "2"})
    assert full.status_code == 503 and "1 environments" in full.json()["detail"]
    # an idle environment is released when room is needed
    environments.live[first].last_used -= 601
    again = http.post("/environments", json={"domain": "airline", "task_id": "2"})
    assert again.status_code == 200 and first not in environments.live
    assert http.delete(f"/environments/{first}").status_code == 404
    bad = http.post(f"/environments/{again.json()['id']}/step", json={"action": ""}).json()
    assert bad["observation"].startswith("system: Error") and not bad["terminated"]


# --- benchmark versions ---------------------------------------------------------------------------
def test_a_tau3_server_plays_tau3_tasks_with_tau3_s_customer(tau3):
    import json

    import tau3_case as case

    with case.customer_server() as customer:
        kwargs = {**case.customer_kwargs(customer), "benchmark": "tau3"}
        app = FastAPI()
        environments = add_tau_bench_routes(app, 4, 600.0, **kwargs)
        http = TestClient(app)
        assert http.get("/scenarios").json()["benchmark"] == "tau3"
        mixed = {"domain": "airline", "task_id": case.TASK, "benchmark": "tau2"}
        refused = http.post("/environments", json=mixed)
        assert refused.status_code == 409 and "listed for benchmark 'tau2'" in refused.text
        assert environments.live == {}  # nothing started
        request = {"domain": "airline", "task_id": case.TASK, "benchmark": "tau3"}
        created = http.post("/environments", json=request).json()
        assert created["observation"] == f"user: {case.OPENER}"
        assert created["info"]["benchmark"] == "tau3"
        url, reward = f"/environments/{created['id']}/step", 0.0
        for message in case.gold_messages():  # ART's functional calls, or text for the customer
            (call,) = message.get("tool_calls") or [None]
            action = message["content"]
            if call is not None:
                arguments = json.loads(call["function"]["arguments"])
                listed = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
                action = f"{call['function']['name']}({listed})"
            step = http.post(url, json={"action": action}).json()
            reward += step["reward"]
    assert step["terminated"] and step["info"]["termination_reason"] == "agent_stop"
    assert reward == case.check_grades_differ() == 1.0  # tau2 would grade it 0.0
    case.assert_tau3_customer(customer.requests)


# --- capacity under concurrent creation -----------------------------------------------------------
def test_capacity_is_taken_before_a_slow_opening():
    """40 concurrent creates while each opening takes 1 s: at most --max-sessions succeed."""
    import json
    import sys
    import threading
    import urllib.error
    import urllib.request
    from pathlib import Path

    require("openenv", "uvicorn")
    sys.path.insert(0, str(Path(__file__).parent))
    from openenv_servers import running_server

    from airline_gym.testing.openai_server import OpenAIServer, Reply

    statuses: list[int] = []

    def create(url: str, task_id: str) -> None:
        body = json.dumps({"domain": "airline", "task_id": task_id}).encode()
        request = urllib.request.Request(url + "/environments", data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                statuses.append(response.status)
        except urllib.error.HTTPError as exc:
            statuses.append(exc.code)

    with OpenAIServer(default=Reply("I need to change my flight.", delay=1.0)) as llm:
        options = ["--max-sessions", "3", "--user-model", "openai/customer"]
        with running_server(*options, "--user-api-base", llm.base_url) as url:
            threads = [threading.Thread(target=create, args=(url, str(i))) for i in range(40)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=180)
    assert len(statuses) == 40
    assert statuses.count(200) == 3 and statuses.count(503) == 37, sorted(statuses)
    assert len(llm.requests) == 3  # the refused ones never reached the customer's model
