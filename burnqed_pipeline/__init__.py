"""burnqed's Dagster code location: assets partitioned by iteration that call
into burnqed_core."""
