"""``bench --vs-reference``, the domain side: a fresh episode DB, read and write tool calls,
grading a finished episode, and the gold replay of many tasks (both sides must agree)."""

from __future__ import annotations

import time
from typing import Any

from airline_gym.domain.prompts import GREETING
from airline_gym.testing.bench_common import SAMPLE_BOOKING, gold_episode, median, retained_per_item
from airline_gym.testing.bench_side_by_side import SideBySide
from airline_gym.testing.bench_vs_gym import reservation_calls
from airline_gym.testing.reference import (
    evaluate_reference,
    simulation_run,
    to_reference_messages,
)

__all__ = ["measure_domain", "measure_grading"]


def measure_domain(bench: SideBySide, live_envs: int, reference_live_envs: int) -> None:
    """Time a fresh DB and domain-level tool calls; measure the memory per fresh DB."""
    from airline_gym.domain.toolbox import execute
    from airline_gym.testing.soak import ReferenceReplayer

    ref, base, task, repeat, few = bench.ref, bench.base, bench.task, bench.repeat, bench.few
    add = bench.add
    read_args, _ = reservation_calls(bench)
    booking = SAMPLE_BOOKING
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


def measure_grading(bench: SideBySide, gold_tasks: int) -> None:
    """Time grading the task's gold episode and the gold replay of ``gold_tasks`` tasks."""
    from airline_gym.domain.grading import grade

    ref, base, task, repeat, few = bench.ref, bench.base, bench.task, bench.repeat, bench.few
    add, checks, ref_tasks, tasks = bench.add, bench.checks, bench.ref_tasks, bench.tasks
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
