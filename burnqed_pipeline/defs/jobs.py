"""Jobs: the shared base assets, and one iteration (every partitioned asset of a partition)."""

from __future__ import annotations

import dagster as dg

from burnqed_pipeline.defs.partitions import iterations

BASE_GROUP = "base"
ITERATION_GROUP = "iteration"

base_job = dg.define_asset_job(
    "base", selection=dg.AssetSelection.groups(BASE_GROUP),
    description="The traced base corpus, the base model and the automation baselines (shared by all iterations).",
)

iteration_job = dg.define_asset_job(
    "iteration", selection=dg.AssetSelection.groups(ITERATION_GROUP), partitions_def=iterations,
    description="Every stage of one iteration (pick the partition): tactic pairs to eval report.",
)
