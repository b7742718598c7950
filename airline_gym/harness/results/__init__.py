"""Results files in tau2-bench's format, pass^k, summaries, run-to-run comparison and plots.

- :mod:`.io`: reading (the one validating parser) and atomic writing of results files;
- :mod:`.tau2`: episodes as tau2 messages, ``reward_info`` and simulation records;
- :mod:`.metrics`: pass^k with its 95% interval, success, per-task tallies, summaries;
- :mod:`.intervals`: the seeded bootstrap over tasks under those intervals and compare's verdict;
- :mod:`.comparability`: what differs between two runs besides the agent;
- :mod:`.compare`: two runs task by task, and B - A with its paired interval and verdict;
- :mod:`.plot`: the pass^k curve.

Each simulation of a file holds ``id``, ``task_id``, ``trial``, ``seed``,
``termination_reason``, ``reward_info`` (``reward``, ``db_check``, ``communicate_checks``,
``action_checks``, ``reward_basis``, ``reward_breakdown``, ``info``), ``messages`` in tau2's
format, ``agent_cost``, ``user_cost``, ``duration`` and timestamps.
"""

from airline_gym.harness.results.comparability import Difference, differences
from airline_gym.harness.results.compare import (
    Comparison,
    PairedDifference,
    TaskComparison,
    compare,
    paired_difference,
)
from airline_gym.harness.results.intervals import Interval, bootstrap_interval, verdict
from airline_gym.harness.results.io import (
    JSONObject,
    Results,
    check_simulation,
    encode,
    now,
    parse_json,
    read_json,
    write_atomic,
    write_lines_atomic,
)
from airline_gym.harness.results.metrics import (
    disagreeing_tasks,
    is_success,
    pass_hat_k,
    pass_hat_k_intervals,
    sim_reward,
    summarize,
    task_outcomes,
    task_sort_key,
    task_successes,
)
from airline_gym.harness.results.plot import plot_pass_hat_k
from airline_gym.harness.results.summary_text import format_summary
from airline_gym.harness.results.tau2 import (
    RAW_ARGUMENTS,
    reward_info,
    simulation_record,
    tau2_messages,
)

__all__ = [
    "RAW_ARGUMENTS",
    "Comparison",
    "Difference",
    "Interval",
    "JSONObject",
    "PairedDifference",
    "Results",
    "TaskComparison",
    "bootstrap_interval",
    "check_simulation",
    "compare",
    "differences",
    "disagreeing_tasks",
    "encode",
    "format_summary",
    "is_success",
    "now",
    "paired_difference",
    "parse_json",
    "pass_hat_k",
    "pass_hat_k_intervals",
    "plot_pass_hat_k",
    "read_json",
    "reward_info",
    "sim_reward",
    "simulation_record",
    "summarize",
    "task_outcomes",
    "task_sort_key",
    "task_successes",
    "tau2_messages",
    "verdict",
    "write_atomic",
    "write_lines_atomic",
]
