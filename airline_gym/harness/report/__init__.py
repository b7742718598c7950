"""An HTML report of one results file, or of two side by side: one self-contained page.

``write_report([path], out)`` reads a tau2-bench results file (ours, ``tau2 run``'s, a
leaderboard submission), re-grades every simulation to get its DB diff and communicate matches,
and writes a page with the run's overview, a filterable, searchable list of simulations and each
simulation's transcript next to its grade (``#task-17-trial-0`` links straight to one).

- :mod:`.records`: a simulation as the page reads it (compact messages, audit flags);
- :mod:`.grades`: its grade (re-graded, or as recorded) and where each string was said;
- :mod:`.overview`: the run's description, pass^k curve geometry, task x trial grid;
- :mod:`.build`: one or two files into the page's data (and the tasks that flipped);
- :mod:`.page`: the Jinja2 template rendered and written.
"""

from airline_gym.harness.report.build import build_report_data, load_run
from airline_gym.harness.report.page import render_report, write_report

__all__ = ["build_report_data", "load_run", "render_report", "write_report"]
