"""The nightly eval schedule: cron and time zone from the profile's ``nightly`` section (``BURNQED_PROFILE``,
default tiny), off until turned on in the UI (Automation). A schedule's cron is part of the definitions, so this
reads the variable when the location loads; the runs' profile resource reads it again when each run starts
(``dg.EnvVar``, `burnqed_pipeline.defs.bindings`)."""


import logging
import os

import dagster as dg

from burnqed_core.config import NightlyConfig, load_profile
from burnqed_core.errors import BurnqedError
from burnqed_core.loop.stages.nightly_eval import newest_complete, report_day
from burnqed_pipeline.defs.bindings import PROFILE_ENV
from burnqed_pipeline.defs.jobs import NIGHTLY_DATE_TAG, nightly_job
from burnqed_pipeline.defs.partitions import iteration_keys

log = logging.getLogger(__name__)


def nightly_settings() -> NightlyConfig:
    """The ``nightly`` section of the location's profile; its defaults if the profile does not load (the
    runs then fail with the profile's error, the code location still loads)."""
    try:
        return load_profile(os.environ.get(PROFILE_ENV, "tiny")).nightly
    except BurnqedError as e:
        log.warning("nightly schedule: %s; using the default cron", e)
        return NightlyConfig()


def newest_complete_iteration(instance: dg.DagsterInstance) -> int | None:
    """The newest iteration whose merged_model is materialised."""
    return newest_complete(iteration_keys(instance),
                                   instance.get_materialized_partitions(dg.AssetKey("merged_model")))


def nightly_schedule(settings: NightlyConfig) -> dg.ScheduleDefinition:
    """The schedule for a profile's ``nightly`` section (its cron and time zone, the report's date)."""

    @dg.schedule(name="nightly_eval_schedule", cron_schedule=settings.cron, execution_timezone=settings.timezone,
                 job=nightly_job, default_status=dg.DefaultScheduleStatus.STOPPED,
                 description="Evaluate the newest complete iteration on the eval's sets and "
                             "nightly.extra_benchmarks; dated reports under <work_dir>/iter_N/nightly_eval/<date>/.")
    def nightly_eval_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
        n = newest_complete_iteration(context.instance)
        if n is None:
            return dg.SkipReason("no iteration has a materialised merged_model yet")
        day = report_day(settings.timezone, context.scheduled_execution_time)
        return dg.RunRequest(run_key=f"nightly-{day}-{n}", partition_key=str(n), tags={NIGHTLY_DATE_TAG: day})

    return nightly_eval_schedule


@dg.definitions
def schedules() -> dg.Definitions:
    """The schedule of the location's profile, made when the definitions load (not at import)."""
    return dg.Definitions(schedules=[nightly_schedule(nightly_settings())])
