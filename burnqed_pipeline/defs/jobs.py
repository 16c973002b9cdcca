"""Jobs: the shared base assets, and one iteration (every partitioned asset of a partition)."""

from __future__ import annotations

import dagster as dg

from burnqed_pipeline.defs.partitions import iterations

BASE_GROUP = "base"
ITERATION_GROUP = "iteration"
# Run retries (dagster.yaml `run_retries`) re-execute from failure: only failed and skipped steps run again.
RETRY_TAGS = {"dagster/retry_strategy": "FROM_FAILURE"}

base_job = dg.define_asset_job(
    "base", selection=dg.AssetSelection.groups(BASE_GROUP), tags=RETRY_TAGS,
    description="The traced base corpus, the base model and the automation baselines (shared by all iterations).",
)

iteration_job = dg.define_asset_job(
    "iteration", selection=dg.AssetSelection.groups(ITERATION_GROUP), partitions_def=iterations, tags=RETRY_TAGS,
    description="Every stage of one iteration (pick the partition): tactic pairs to eval report.",
)
