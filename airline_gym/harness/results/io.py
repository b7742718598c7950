"""Reading and writing results files: the one parser (eval ``--resume``, ``regrade``, ``compare``).

A results file is the JSON that tau2-bench's runner writes: top-level ``timestamp``, ``info``,
``tasks`` (task records as in tasks.json) and ``simulations``. A bare JSON list of simulations is
accepted too. Anything else, or a simulation of the wrong shape, is a one-line ``ValueError``
that names the file and the field.

Text is written as UTF-8; a lone surrogate (possible in model output) is written as its JSON
escape (``\\ud83d``), which reads back as the same character, so saving never fails on it.
Every write goes through :class:`~airline_gym.data.output.OutputFile`: a temp file in the same
folder that is then renamed over the target, so a crash never leaves a partial file and never
loses the previous content, and a device or fifo is never written.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from airline_gym.data.limits import RESULTS_MAX_BYTES, read_limited
from airline_gym.data.output import OutputFile
from airline_gym.domain.task_checks import check_task
from airline_gym.domain.validation import json_type
from airline_gym.errors import ConfigError, MissingFileError

__all__ = [
    "JSONObject",
    "Results",
    "check_simulation",
    "check_task",
    "check_unique",
    "encode",
    "now",
    "parse_json",
    "read_json",
    "write_atomic",
    "write_lines_atomic",
]

JSONObject = dict[str, Any]
_SURROGATE = re.compile("[\ud800-\udfff]")


def now() -> str:
    """The current local time in tau2's format (ISO 8601, microseconds)."""
    return datetime.now().isoformat()


def encode(obj: Any) -> str:
    """One compact JSON line: UTF-8 text kept as is, lone surrogates escaped (``\\udXXX``).

    ``json.dumps`` only emits surrogates inside string literals, where the escape is valid
    JSON and ``json.loads`` turns it back into the same character.
    """
    text = json.dumps(obj, ensure_ascii=False)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


class _NotFinite(Exception):
    """A NaN or an infinity in JSON text (not JSON; Python's parser accepts it)."""


def _no_constant(name: str) -> Any:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotFinite(text[:40])
    return value


def parse_json(text: str | bytes, source: str) -> Any:
    """Parse JSON text; malformed or absurdly nested input is a one-line ``ValueError``, and so
    is a ``NaN``, ``Infinity`` or a number too large for a float (``1e400``): no JSON parser
    but Python's reads them, and a browser's ``JSON.parse`` fails on the whole page."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except _NotFinite as exc:
        raise ConfigError(
            f"{source}: {exc} is not a JSON number (every number must be finite)"
        ) from None
    except RecursionError:
        raise ConfigError(f"{source}: JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise ConfigError(f"{source}: not valid JSON ({exc})") from None


def read_json(
    path: str | os.PathLike[str], limit: int = RESULTS_MAX_BYTES, what: str = "results file"
) -> Any:
    """A JSON file's content (``FileNotFoundError``/one-line ``ValueError`` on failure); a file
    over ``limit`` bytes is refused unread (:func:`~airline_gym.data.limits.read_limited`)."""
    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"no such file: {path}")
    try:
        data = read_limited(path, limit, what)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_json(data, str(path))


# --- validation -----------------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_simulation(sim: Any, where: str, need_messages: bool = False) -> None:
    """Raise a one-line ``ValueError`` unless ``sim`` has the shape the harness reads.

    ``where`` names the simulation (``FILE: simulation 3``). Checked: ``task_id`` (string or
    integer), ``trial`` (integer), ``messages`` (a list of objects whose ``tool_calls`` is a list
    of objects or null), ``reward_info`` (an object whose ``reward`` is a number or null),
    ``termination_reason`` (string or null).
    """
    if not isinstance(sim, dict):
        raise ConfigError(f"{where}: must be an object, not {json_type(sim)}")
    task_id = sim.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        raise ConfigError(
            f"{where}: 'task_id' must be a string or an integer, not {json_type(task_id)}"
        )
    trial = sim.get("trial")
    if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int) or trial < 0):
        raise ConfigError(f"{where}: 'trial' must be a whole number >= 0, not {trial!r}")
    if "messages" not in sim and need_messages:
        raise ConfigError(f"{where}: no 'messages'")
    messages = sim.get("messages", [])
    if not isinstance(messages, list):
        raise ConfigError(f"{where}: 'messages' must be a list, not {json_type(messages)}")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ConfigError(f"{where}: message {i} must be an object, not {json_type(message)}")
        calls = message.get("tool_calls")
        if calls is not None and not (
            isinstance(calls, list) and all(isinstance(c, dict) for c in calls)
        ):
            raise ConfigError(f"{where}: message {i}: 'tool_calls' must be a list of objects")
    info = sim.get("reward_info")
    if info is not None:
        if not isinstance(info, dict):
            raise ConfigError(f"{where}: 'reward_info' must be an object, not {json_type(info)}")
        reward = info.get("reward")
        if reward is not None and not _is_number(reward):
            raise ConfigError(
                f"{where}: 'reward_info.reward' must be a number, not {json_type(reward)}"
            )
    reason = sim.get("termination_reason")
    if reason is not None and not isinstance(reason, str):
        kind = json_type(reason)
        raise ConfigError(f"{where}: 'termination_reason' must be a string, not {kind}")


def check_unique(sims: Iterable[Mapping[str, Any]], source: str) -> None:
    """Refuse (one line) a simulation written twice: two with the same ``id``, or with the same
    task and the same recorded ``trial``. Counted twice, a duplicate is a trial that never ran
    (four copies of one failure read as pass^4 of a task tried four times)."""
    by_id: dict[str, int] = {}
    by_trial: dict[tuple[str, int], int] = {}
    for i, sim in enumerate(sims):
        sim_id, trial = sim.get("id"), sim.get("trial")
        seen = None
        if isinstance(sim_id, str) and sim_id:
            seen = by_id.setdefault(sim_id, i)
        if (seen is None or seen == i) and isinstance(trial, int):
            seen = by_trial.setdefault((str(sim.get("task_id")), trial), i)
        if seen is not None and seen != i:
            raise ConfigError(
                f"{source}: simulations {seen} and {i} are both task "
                f"{_short(sim.get('task_id'))} trial {trial} (a simulation written twice); "
                "refusing to count it as two trials: remove the duplicate"
            )


def _short(value: Any) -> str:
    return json.dumps(str(value), ensure_ascii=False)[:60]


# --- the file -------------------------------------------------------------------------------
@dataclass
class Results:
    """One results file: ``info``, ``tasks`` (raw task records) and ``simulations`` (dicts).

    ``simulations`` is a list, or, for what ``evaluate(out=...)`` returns, a read-only sequence
    that reads each simulation from the results file when it is used
    (:class:`~airline_gym.harness.results.saved.SavedSimulations`): memory stays flat in the
    size of the run.
    """

    info: JSONObject = field(default_factory=dict)
    tasks: list[JSONObject] = field(default_factory=list)
    simulations: Sequence[JSONObject] = field(default_factory=list)
    timestamp: str = field(default_factory=now)

    @classmethod
    def from_data(cls, data: Any, source: str = "results", need_messages: bool = False) -> Results:
        """From parsed JSON: a results object, or a bare list of simulations (validated)."""
        if isinstance(data, list):
            data = {"simulations": data}
        if not isinstance(data, dict) or not isinstance(data.get("simulations"), list):
            raise ConfigError(f"{source}: not a results file (expected 'simulations' or a list)")
        sims = data["simulations"]
        for i, sim in enumerate(sims):
            check_simulation(sim, f"{source}: simulation {i}", need_messages)
        info, tasks = data.get("info") or {}, data.get("tasks") or []
        if not isinstance(info, dict):
            raise ConfigError(f"{source}: 'info' must be an object, not {json_type(info)}")
        if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
            raise ConfigError(f"{source}: 'tasks' must be a list of objects")
        timestamp = data.get("timestamp")
        return cls(
            info=info,
            tasks=tasks,
            simulations=sims,
            timestamp=timestamp if isinstance(timestamp, str) and timestamp else now(),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], need_messages: bool = False) -> Results:
        """Read a results file (raises ``FileNotFoundError`` or a one-line ``ValueError``)."""
        path = Path(path)
        if not path.is_file():
            raise MissingFileError(f"no such results file: {path}")
        return cls.from_data(read_json(path), str(path), need_messages)

    def to_dict(self) -> JSONObject:
        """The file's JSON object (every simulation in a list)."""
        return {**self.header(), "simulations": list(self.simulations)}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically (temp file, then rename): a crash never leaves a partial file."""
        write_atomic(path, self.header(), [encode(s) for s in self.simulations])

    def header(self) -> JSONObject:
        """Everything but the simulations."""
        return {"timestamp": self.timestamp, "info": self.info, "tasks": self.tasks}

    def finished(self) -> set[tuple[str, int]]:
        """The (task id, trial) pairs that have a simulation."""
        return {(str(s["task_id"]), int(s.get("trial") or 0)) for s in self.simulations}


def write_atomic(
    path: str | os.PathLike[str], header: Mapping[str, Any], sim_lines: Iterable[str]
) -> None:
    """Write a results file from its header and pre-encoded simulations (one per line)."""
    tasks = header.get("tasks") or []

    def chunks() -> Iterable[str]:
        yield "{\n"
        yield f'"timestamp": {encode(header.get("timestamp") or now())},\n'
        yield f'"info": {encode(header.get("info") or {})},\n'
        yield '"tasks": [' + ("\n" if tasks else "")
        yield ",\n".join(encode(t) for t in tasks)
        yield "],\n"
        yield '"simulations": ['
        for i, line in enumerate(sim_lines):
            yield ("\n" if i == 0 else ",\n") + line
        yield "\n]\n}\n"

    write_lines_atomic(path, chunks())


def write_lines_atomic(path: str | os.PathLike[str], chunks: Iterable[str]) -> None:
    """Write text to a temp file beside ``path``, then rename it over ``path``
    (:class:`~airline_gym.data.output.OutputFile`, without its lock: a caller that needs one,
    such as ``eval``'s run file, holds it).

    If anything fails (even midway through ``chunks``), ``path`` keeps its previous content.
    """
    with OutputFile(path, what="file", lock=False, make_folder=True) as out:
        out.write_all(chunks)
