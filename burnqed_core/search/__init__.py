"""Best-first proof search with batched expansion, and its trajectory output.

* `engine`: `SearchEngine` (search many theorems at once, one policy call
  and one Lean call per step), `SearchResult`, `resolve_sampling`;
* `automation`: automation tactics added to the policy's candidates, with their origin;
* `tree`: nodes, edges, the transposition table, labels;
* `scoring`: node priority and the `EnergyScorer` protocol of the EBM;
* `trajectories`: the output directory of Parquet parts, its run record,
  readers and statistics;
* `runner`: `run_search`, with progress bar, resume and SIGTERM handling;
* `session`: the run record and engine over an open policy and Lean
  environment (`search_theorems`: command line, eval, loop);
* `job`: the whole ``burnqed search`` job (`search_job`: policy, pool,
  output). Imports go one way only: runner <- session <- job.
"""

from burnqed_core.search.engine import (
    EngineStats,
    Sampling,
    SearchEngine,
    SearchOutcome,
    SearchResult,
    resolve_sampling,
)
from burnqed_core.search.runner import RunReport, run_search
from burnqed_core.search.scoring import EnergyScorer, priority
from burnqed_core.search.trajectories import (
    RunRecord,
    TrajectoryStats,
    TrajectoryWriter,
    finished_theorems,
    read_results,
    read_run_record,
    read_trajectories,
    read_trajectory_table,
    trajectory_stats,
)

__all__ = [
    "EnergyScorer",
    "EngineStats",
    "RunRecord",
    "RunReport",
    "Sampling",
    "SearchEngine",
    "SearchOutcome",
    "SearchResult",
    "TrajectoryStats",
    "TrajectoryWriter",
    "finished_theorems",
    "priority",
    "read_results",
    "read_run_record",
    "read_trajectories",
    "read_trajectory_table",
    "resolve_sampling",
    "run_search",
    "trajectory_stats",
]
