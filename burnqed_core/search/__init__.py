"""Best-first proof search with batched expansion, and its trajectory output.

* `engine`: `SearchEngine` (search many theorems at once, one policy call
  and one Lean call per step), `resolve_sampling`;
* `automation`: automation tactics added to the policy's candidates, with their origin;
* `tree`: nodes, edges, the transposition table, labels;
* `scoring`: node priority and the `EnergyScorer` protocol of the EBM;
* `trajectories`: the writers of the output directory of Parquet parts, its
  run record and statistics (the readers, and `SearchResult`, are in
  `burnqed_core.trajectory_io`, below every package that reads an output);
* `job`: one search job: `run_search` (progress bar, resume, SIGTERM),
  `search_theorems` (the run record and the engine over an open policy and
  Lean environment: command line, eval, loop) and `search_job` (the whole
  ``burnqed search``: policy, pool, output).
"""

from burnqed_core.search.engine import (
    EngineStats,
    Sampling,
    SearchEngine,
    SearchOutcome,
    resolve_sampling,
)
from burnqed_core.search.job import RunReport, run_search
from burnqed_core.search.scoring import EnergyScorer, priority
from burnqed_core.search.trajectories import (
    RunRecord,
    TrajectoryStats,
    TrajectoryWriter,
    read_run_record,
    trajectory_stats,
)
from burnqed_core.trajectory_io import SearchResult

__all__ = (
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
    "priority",
    "read_run_record",
    "resolve_sampling",
    "run_search",
    "trajectory_stats",
)
