"""Jobs: the shared base assets, one iteration (every partitioned asset of a partition), the nightly eval."""

from __future__ import annotations

from types import MappingProxyType

import dagster as dg

from burnqed_pipeline.defs.partitions import iterations
from burnqed_pipeline.vocabulary import BASE_GROUP, ITERATION_GROUP, NIGHTLY_GROUP

# Run retries (dagster.yaml `run_retries`) re-execute from failure: only failed and skipped steps run again.
RETRY_TAGS = MappingProxyType({"dagster/retry_strategy": "FROM_FAILURE"})

base_job = dg.define_asset_job(
    "base", selection=dg.AssetSelection.groups(BASE_GROUP), tags=RETRY_TAGS,
    description="The traced base corpus, the base model and the automation baselines (shared by all iterations).",
)

iteration_job = dg.define_asset_job(
    "iteration", selection=dg.AssetSelection.groups(ITERATION_GROUP), partitions_def=iterations, tags=RETRY_TAGS,
    description="Every stage of one iteration (pick the partition): tactic pairs to eval report.",
)

#: Run tag holding the nightly report's date (``YYYY-MM-DD``), set by the schedule; a run without it (launched
#: by hand) uses today's date in the profile's ``nightly.timezone``.
NIGHTLY_DATE_TAG = "burnqed/nightly_date"

nightly_job = dg.define_asset_job(
    "nightly", selection=dg.AssetSelection.groups(NIGHTLY_GROUP), partitions_def=iterations,
    description="The nightly eval of one iteration (the schedule picks the newest complete one) on the eval's sets "
                "and nightly.extra_benchmarks, dated reports under <work_dir>/iter_N/nightly_eval/<date>/.",
)
