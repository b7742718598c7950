"""``bench --vs-reference``, the gym side: episode reset, read and write steps (a read step at
several depths of one episode), and the memory each live env keeps."""

from __future__ import annotations

import json
from typing import Any

from airline_gym.testing.bench_common import (
    median,
    reset_every,
    retained_per_item,
    step_at_depth,
)
from airline_gym.testing.bench_side_by_side import SideBySide
from airline_gym.testing.reference import stub_user_llm

__all__ = ["EPISODE_TOOL_STEPS", "STEP_DEPTHS", "measure_gym", "reservation_calls"]

EPISODE_TOOL_STEPS = 50  # write steps are measured in episodes of at most this many tool calls
STEP_DEPTHS = (10, 500)  # read steps are measured at these depths of one episode (--depths)


def _tool_message(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    from airline_gym.agents import tool_call_message

    return tool_call_message(name, arguments, call_id)


def _tau2_action(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def reservation_calls(bench: SideBySide) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arguments of the timed read (a reservation's details) and write (one more bag)."""
    base = bench.base
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
    return read_args, bags_args


def measure_gym(
    bench: SideBySide, live_envs: int, reference_live_envs: int, depths: tuple[int, ...]
) -> None:
    """Time resets and steps of both gym envs, and measure their memory per live env."""
    from airline_gym.env.airline_env import AirlineEnv

    ref, task, repeat, few, many = bench.ref, bench.task, bench.repeat, bench.few, bench.many
    add, checks = bench.add, bench.checks
    read_args, bags_args = reservation_calls(bench)
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
