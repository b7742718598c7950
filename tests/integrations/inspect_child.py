"""Run by test_inspect.py with the Python of the Inspect venv (inspect-ai needs openai >= 3.4,
the ``verifiers`` extra pins openai < 3, so Inspect lives in a venv of its own in CI).

``python inspect_child.py BASE_URL LOG_DIR``: runs the README's Inspect example against the
scripted server at BASE_URL, then the README's ``inspect eval airline_gym/airline`` command for
task 17, then task 17 with Inspect's model role ``user`` as the customer, and prints what Inspect
logged (one JSON object) for the parent test to check. ``python inspect_child.py tau3 BASE_URL
LOG_DIR`` plays tau3's case instead (``main_tau3``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from readme_examples import readme_example, run_example

README_URL = "http://localhost:8000/v1"


def samples(log: Any) -> list[dict[str, Any]]:
    rows = []
    for sample in log.samples:
        score = sample.scores["airline_grade"]
        rows.append(
            {
                "id": sample.id,
                "value": score.value,
                "answer": score.answer,
                "metadata": score.metadata,
                "roles": [m.role for m in sample.messages],
                "error": sample.error.message if sample.error else None,
            }
        )
    return rows


def main(base_url: str, log_dir: str) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    os.environ["LOCAL_API_KEY"] = "EMPTY"  # the openai-api provider's key for service "local"
    code = readme_example("inspect")
    assert code.count(README_URL) == 1 and code.count('"logs"') == 1
    code = code.replace(README_URL, base_url).replace('"logs"', repr(f"{log_dir}/example"))
    logs = run_example("inspect", code=code)["logs"]
    out: dict[str, Any] = {"status": logs[0].status, "samples": samples(logs[0])}
    # the README's command line (the package's entry point names the task airline_gym/airline)
    inspect = Path(sys.executable).with_name("inspect")
    command = [str(inspect), "eval", "airline_gym/airline", "-T", "task_ids=17"]
    command += ["--model", "openai-api/local/Qwen3-8B", "--model-base-url", base_url]
    command += ["--log-dir", f"{log_dir}/cli", "--display", "none"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    out["cli"] = {"returncode": done.returncode, "stderr": done.stderr[-2000:]}
    if done.returncode == 0:
        (info,) = list_eval_logs(f"{log_dir}/cli")
        log = read_eval_log(info)
        out["cli"].update({"status": log.status, "task": log.eval.task, "samples": samples(log)})
    # the customer played by Inspect's model role "user" (the same server, model "customer")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from airline_gym.integrations.inspect import airline

    customer = get_model("openai-api/local/customer", base_url=base_url)
    (log,) = inspect_eval(
        airline(task_ids="17", user="model"),
        model="openai-api/local/policy",
        model_base_url=base_url,
        model_roles={"user": customer},
        log_dir=f"{log_dir}/role",
        display="none",
    )
    out["role"] = {"status": log.status, "samples": samples(log)}
    print(json.dumps(out))


def main_tau3(base_url: str, log_dir: str) -> None:
    """``-T benchmark=tau3``: tau3's task 7 with Inspect's model role ``user`` as the customer,
    then ``-T benchmark=tau4`` on the command line (refused)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from airline_gym.integrations.inspect import airline

    os.environ["LOCAL_API_KEY"] = "EMPTY"
    customer = get_model("openai-api/local/customer", base_url=base_url)
    (log,) = inspect_eval(
        airline(task_ids="7", user="model", benchmark="tau3", seed=5),
        model="openai-api/local/policy",
        model_base_url=base_url,
        model_roles={"user": customer},
        log_dir=f"{log_dir}/tau3",
        display="none",
    )
    out: dict[str, Any] = {"status": log.status, "samples": samples(log)}
    inspect = Path(sys.executable).with_name("inspect")
    command = [str(inspect), "eval", "airline_gym/airline", "-T", "task_ids=7"]
    command += ["-T", "benchmark=tau4", "--model", "openai-api/local/policy"]
    command += ["--model-base-url", base_url, "--log-dir", f"{log_dir}/bad", "--display", "none"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    out["bad"] = {"returncode": done.returncode, "output": (done.stdout + done.stderr)[-4000:]}
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "tau3":
        main_tau3(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2])
