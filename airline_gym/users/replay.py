"""Replay the customer turns of a recorded tau2-bench simulation, whatever the agent says."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from airline_gym.data.limits import RESULTS_MAX_BYTES, read_limited
from airline_gym.domain.prompts import STOP
from airline_gym.domain.tasks import Task
from airline_gym.errors import ConfigError
from airline_gym.users.base import Dialogue, UserSimulator

__all__ = ["ReplayUser", "select_simulation"]

Source = Mapping[str, Any] | Sequence[str] | str | os.PathLike[str]


def select_simulation(
    results: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    simulation_id: str | None = None,
    task_id: str | int | None = None,
    trial: int | None = None,
) -> dict[str, Any]:
    """One simulation of a tau2 results dict (or a bare list of simulations).

    Filters by ``simulation_id``, ``task_id`` and ``trial``; among several matches the lowest
    trial wins. With no filter the results must hold exactly one simulation.
    """
    sims = list(results["simulations"] if isinstance(results, Mapping) else results)
    matches = [
        s
        for s in sims
        if (simulation_id is None or s.get("id") == simulation_id)
        and (task_id is None or str(s.get("task_id")) == str(task_id))
        and (trial is None or s.get("trial") == trial)
    ]
    wanted = {"simulation_id": simulation_id, "task_id": task_id, "trial": trial}
    asked = ", ".join(f"{k}={v!r}" for k, v in wanted.items() if v is not None)
    if not matches:
        raise ConfigError(f"no simulation with {asked or 'any id'} among {len(sims)}")
    if not asked and len(matches) > 1:
        raise ConfigError(
            f"the results hold {len(matches)} simulations: "
            "pass simulation_id, or task_id (and trial)"
        )
    best: Mapping[str, Any] = min(matches, key=lambda s: s.get("trial") or 0)
    return dict(best)


def _user_turns(messages: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(
        str(m["content"])
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"].strip()
    )


class ReplayUser(UserSimulator):
    """Says the recorded customer turns in order, then ``###STOP###``; ignores the agent.

    ``source`` is a tau2 simulation dict (``messages`` with roles user/assistant/tool), a results
    dict or results-file path (then ``simulation_id`` / ``task_id`` / ``trial`` pick the
    simulation, see :func:`select_simulation`), or a plain list of customer messages. The turn
    said is chosen by the number of customer turns already in the dialogue, so a reply depends
    only on the dialogue (asking twice with the same dialogue gives the same turn).
    """

    offline = True
    blocking = False

    def __init__(
        self,
        source: Source | None = None,
        *,
        simulation_id: str | None = None,
        task_id: str | int | None = None,
        trial: int | None = None,
    ) -> None:
        if source is None:
            raise ConfigError(
                "user='replay' needs a source: pass user_kwargs={'source': ...} with a tau2 "
                "results file path, a results or simulation dict, or a list of customer messages"
            )
        data = _load(source) if isinstance(source, (str, os.PathLike)) else source
        if isinstance(data, Mapping) and "simulations" in data:
            data = select_simulation(data, simulation_id, task_id, trial)
        if isinstance(data, Mapping):
            self.turns = _user_turns(data.get("messages") or [])
            self.simulation_id: str | None = data.get("id")
            recorded = data.get("task_id")
            self.task_id: str | None = None if recorded is None else str(recorded)
        else:
            if not all(isinstance(t, str) for t in data):
                raise TypeError("a replay list must hold strings (the customer's messages)")
            self.turns = tuple(data)
            self.simulation_id = None
            self.task_id = None if task_id is None else str(task_id)
        self.task: Task | None = None

    @classmethod
    def from_results(
        cls,
        path: str | os.PathLike[str],
        simulation_id: str | None = None,
        task_id: str | int | None = None,
        trial: int | None = None,
    ) -> ReplayUser:
        """Replay one simulation of a tau2 results file."""
        return cls(path, simulation_id=simulation_id, task_id=task_id, trial=trial)

    def __repr__(self) -> str:
        return (
            f"ReplayUser(simulation_id={self.simulation_id!r}, task_id={self.task_id!r}, "
            f"turns={len(self.turns)})"
        )

    def reset(self, task: Task, seed: int | None = None) -> None:
        """Start over; warns when ``task`` is not the recorded simulation's task."""
        if self.task_id is not None and task.id != self.task_id:
            warnings.warn(
                f"replaying the customer of task {self.task_id} on task {task.id}",
                stacklevel=2,
            )
        self.task = task

    def reply(self, dialogue: Dialogue) -> str:
        """The next recorded turn, or ``###STOP###`` when they are used up."""
        said = sum(1 for m in dialogue if m.get("role") == "user")
        return self.turns[said] if said < len(self.turns) else STOP


def _load(path: str | os.PathLike[str]) -> Any:
    return json.loads(read_limited(path, RESULTS_MAX_BYTES, "replay source"))
