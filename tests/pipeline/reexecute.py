"""Re-execute a failed run of the code location from failure, in a process of its own (what the UI's
"Re-execute from failure" and the run-retry daemon do): ``python -c "from tests.pipeline.reexecute import main;
main()" RUN_ID`` against the instance at ``DAGSTER_HOME``; prints the new run's id and status."""

from __future__ import annotations

import os
import sys

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableRepository


def asset_job(name: str = "__ASSET_JOB") -> dg.ReconstructableJob:
    """A job of the code location (default: the implicit asset job, which `dagster asset materialize` and the UI
    run), reconstructable by the run's step processes."""
    repo = ReconstructableRepository.for_module("burnqed_pipeline.definitions", "defs", working_directory=os.getcwd())
    return repo.get_reconstructable_job(name)


def main() -> None:
    parent_id = sys.argv[1]
    with dg.DagsterInstance.get() as instance:
        parent = instance.get_run_by_id(parent_id)
        if parent is None:
            raise SystemExit(f"no run {parent_id} in {instance.root_directory}")
        result = dg.execute_job(asset_job(), instance,
                                reexecution_options=dg.ReexecutionOptions.from_failure(parent_id, instance),
                                tags=dict(parent.tags))
        run = instance.get_run_by_id(result.run_id)
        print(f"reexecution {result.run_id} {run.status.value if run else 'missing'}", flush=True)


if __name__ == "__main__":
    main()
