"""Render the report: one self-contained HTML file (every style, script and datum inline).

The page is a Jinja2 template with autoescaping on: every string from a results file that the
template writes (run info, task ids, termination reasons) is HTML-escaped. Transcripts and
grades are not written as HTML at all: they travel as gzip-compressed JSON in base64, one
line per :data:`CHUNK` simulations (about a quarter of the size of plain JSON, which keeps a
1,000-simulation run small), and the page's script decompresses a line with the browser's own
``DecompressionStream`` and draws a simulation only when it is opened, with DOM text nodes (never
``innerHTML``), so a ``<script>`` a model wrote shows as text and never runs.
"""

from __future__ import annotations

import base64
import gzip
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2  # a litellm dependency already; declared in pyproject
from markupsafe import Markup

from airline_gym.harness.report.build import RunData, build_report_data, load_run
from airline_gym.harness.report.overview import pass_hat_k_curve
from airline_gym.harness.results.comparability import check_comparable
from airline_gym.harness.results.io import JSONObject, Results, encode, write_lines_atomic

__all__ = ["CHUNK", "INDEX_FIELDS", "pack", "render_report", "write_report"]

#: Simulations per packed line: opening one decodes its line (20 transcripts, a few ms); the
#: first full-text search decodes them all (50 lines for 1,000 simulations).
CHUNK = 20

#: What the list and the filters need of every simulation, embedded as plain escaped JSON;
#: the rest of an entry (messages, grade, flags) is packed.
INDEX_FIELDS = (
    "task",
    "trial",
    "id",
    "reward",
    "ok",
    "termination",
    "tools",
    "tool_errors",
    "judge_failed",
)


def pack(value: Any) -> str:
    """``value`` as JSON, gzip-compressed (no timestamp: same input, same bytes), in base64."""
    raw = encode(value).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("airline_gym.harness.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _asset(name: str) -> str:
    return (resources.files("airline_gym.harness.report") / "templates" / name).read_text("utf-8")


def _index(sims: Sequence[JSONObject]) -> list[JSONObject]:
    return [{**{k: s[k] for k in INDEX_FIELDS}, "flags": len(s["flags"])} for s in sims]


def _detail(sim: JSONObject) -> JSONObject:
    return {k: sim[k] for k in ("messages", "grade", "flags")}


def _chunks(items: list[JSONObject]) -> list[list[JSONObject]]:
    return [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]


def render_report(
    runs: Sequence[tuple[Results, RunData]], title: str = "", differences: Sequence[Any] = ()
) -> str:
    """The HTML of the report of one run, or of two runs side by side (``differences``: what
    differs between the two besides the agent, shown above their comparison)."""
    data = build_report_data(runs)
    overviews = [overview for _, (overview, _) in runs]
    curve = pass_hat_k_curve(
        [(o["label"], o["summary"]["pass_hat_k"], o["intervals"]) for o in overviews]
    )
    index = {
        "chunk": CHUNK,
        "runs": [{"label": r["label"], "sims": _index(r["sims"])} for r in data["runs"]],
    }
    details = [
        "\n".join(pack(chunk) for chunk in _chunks([_detail(s) for s in r["sims"]]))
        for r in data["runs"]
    ]
    template = _environment().get_template("report.html.j2")
    return template.render(
        title=title or " vs ".join(o["label"] for o in overviews),
        overviews=overviews,
        curve=curve,
        flips=data["flips"],
        differences=[str(d) for d in differences],
        index=index,
        details=details,
        style=Markup(_asset("report.css")),
        script=Markup(_asset("report.js")),
    )


def write_report(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    task_id_maps: Sequence[Mapping[str, str] | None] = (),
    allow_different: bool = False,
) -> Path:
    """Read one or two results files, write their report to ``out`` (atomically).

    Two runs that differ besides the agent (task set, benchmark, reward basis, customer,
    protocol: ``compare``'s rule) are refused with
    :class:`~airline_gym.harness.results.comparability.RunsDiffer` unless ``allow_different``;
    then the page says how they differ."""
    maps = list(task_id_maps) + [None] * (len(paths) - len(task_id_maps))
    runs = [load_run(p, task_id_map=m) for p, m in zip(paths, maps, strict=True)]
    found = check_comparable(runs[0][0], runs[1][0], allow_different) if len(runs) == 2 else []
    html = render_report(runs, differences=found)
    write_lines_atomic(out, [html])
    return Path(out)
