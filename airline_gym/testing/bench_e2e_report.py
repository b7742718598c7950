"""The report of ``bench --e2e``: a text table for the terminal, a markdown one for the README."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from airline_gym.testing.bench_e2e import Figures
    from airline_gym.testing.bench_in_flight import InFlight

__all__ = ["format_report", "markdown_table"]


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.2f} ms"


def format_report(ours: Figures, ref: Figures | None, flight: InFlight | None) -> str:
    rows: list[tuple[str, Callable[[Figures], str]]] = [
        ("whole run, sims/min", lambda f: f"{f.sims_per_min:,.0f} ({f.wall:.1f} s)"),
        ("first to last request, sims/min", lambda f: f"{f.sims_per_min_requests:,.0f}"),
        ("harness CPU per model request", lambda f: _ms(f.cpu_per_request)),
        ("  steady (second half of requests)", lambda f: _ms(f.cpu_per_request_steady)),
        ("command start to first request", lambda f: f"{f.to_first_request:.2f} s"),
        ("  of which harness CPU", lambda f: _s(f.cpu_to_first_request)),
        ("peak RSS", lambda f: f"{f.peak_rss_mib:,.0f} MiB"),
        ("model requests", lambda f: str(f.requests)),
        ("rewards (sum)", lambda f: f"{sum(f.rewards):g} of {f.sims}"),
    ]
    header = f"{'':34} {'airline-gym':>22}" + (f" {'tau2 run':>22}" if ref else "")
    lines = [
        f"{ours.sims} simulations (tasks 0-9 x 2), concurrency 8, scripted server on 127.0.0.1",
        header,
    ]
    for label, show in rows:
        line = f"{label:34} {show(ours):>22}"
        if ref is not None:
            line += f" {show(ref):>22}"
        lines.append(line)
    if ref is not None:
        lines.append(
            f"{'ours / reference, whole run':34} {ours.sims_per_min / ref.sims_per_min:>21.1f}x"
        )
    if flight is not None:
        lines += ["", *_flight_lines(flight)]
    return "\n".join(lines)


def _flight_lines(flight: InFlight) -> list[str]:
    return [
        f"{flight.episodes:,} episodes in flight in one process (async runner), server latency "
        f"{flight.latency:g} s +-{flight.jitter:.0%} per reply:",
        f"  ready request -> sent (harness clock): p50 {_ms(flight.ready_to_sent_p50)}, "
        f"p99 {_ms(flight.ready_to_sent_p99)}, max {_ms(flight.ready_to_sent_max)} "
        f"({flight.timed_requests:,} requests timed); on connections already open: "
        f"p99 {_ms(flight.reused_p99)}",
        f"  reply sent -> same episode's next request: p50 {_ms(flight.turnaround_p50)}, "
        f"p99 {_ms(flight.turnaround_p99)}",
        f"  event-loop lag (10 ms timer): p99 {_ms(flight.loop_lag_p99)}, "
        f"max {_ms(flight.loop_lag_max)}",
        f"  {flight.requests:,} requests in {flight.wall:.1f} s "
        f"({flight.requests / flight.wall:,.0f}/s), CPU {_ms(flight.cpu_per_request)} per request",
        f"  rewards equal the sequential run: {flight.rewards_match}; "
        f"episodes isolated: {flight.isolated}",
    ]


def markdown_table(ours: Figures, ref: Figures | None, flight: InFlight | None) -> str:
    """The figures as a markdown table (the README's)."""
    head = "| | airline-gym | tau2 run (26.3) | ratio |\n|---|---:|---:|---:|"
    rows = [head]

    def row(label: str, a: float | None, b: float | None, show: Callable[[float], str]) -> None:
        ratio = ""
        if a is not None and b is not None and a > 0 and b > 0:
            bigger_is_better = label.startswith("sims/min")
            ratio = f"{(a / b if bigger_is_better else b / a):,.1f}x"
        shown_b = show(b) if b is not None else "n/a"
        rows.append(f"| {label} | {show(a) if a is not None else 'n/a'} | {shown_b} | {ratio} |")

    per_min, ms, sec = (
        (lambda v: f"{v:,.0f}"),
        (lambda v: f"{v * 1000:.2f} ms"),
        (lambda v: f"{v:.2f} s"),
    )
    table: list[tuple[str, str, Callable[[float], str]]] = [
        ("sims/min, whole run", "sims_per_min", per_min),
        ("sims/min, first to last request", "sims_per_min_requests", per_min),
        ("harness CPU per model request", "cpu_per_request", ms),
        ("harness CPU per model request, steady (second half)", "cpu_per_request_steady", ms),
        ("command start to first request", "to_first_request", sec),
        ("harness CPU before the first request", "cpu_to_first_request", sec),
        ("peak RSS", "peak_rss_mib", lambda v: f"{v:,.0f} MiB"),
    ]
    for label, name, show in table:
        row(label, getattr(ours, name), getattr(ref, name) if ref else None, show)
    if flight is not None:
        rows.append(
            f"| {flight.episodes:,} episodes in flight: p99 ready request -> sent "
            f"(all / on open connections) | {flight.ready_to_sent_p99 * 1000:.1f} ms / "
            f"{flight.reused_p99 * 1000:.1f} ms | n/a | |"
        )
        rows.append(
            f"| {flight.episodes:,} episodes in flight: p99 reply -> next request | "
            f"{flight.turnaround_p99 * 1000:.1f} ms | n/a | |"
        )
    return "\n".join(rows)
