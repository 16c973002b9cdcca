"""Declarative automation and the sensor that continues the loop.

* `EVAL_REPORT_CONDITION` (on ``eval_report``): request ``eval_report[N]`` when ``merged_model[N]`` (or
  another dependency of N) lands, once no dependency is missing or in progress, and only while every
  blocking check of its dependencies passed (``ebm[N]``'s check; a failed one keeps it from running in
  later runs too, until the check passes again). Dagster evaluates it in the
  ``default_automation_condition_sensor``, off until turned on (UI: Automation).
* `next_iteration` (off by default): when the newest iteration N's ``eval_report`` is materialised and
  passes the go/no-go, add partition N+1 and launch the ``iteration`` job on it.
"""


import dagster as dg

from burnqed_core.loop.checks import eval_report_check
from burnqed_pipeline.defs.jobs import iteration_job
from burnqed_pipeline.defs.partitions import iteration_keys, iterations
from burnqed_pipeline.resources import ProfileResource
from burnqed_pipeline.stage import stage

EVAL_REPORT_CONDITION = (
    dg.AutomationCondition.eager() & dg.AutomationCondition.all_deps_blocking_checks_passed()
).with_label("eager, all upstream blocking checks passed")


@dg.sensor(name="next_iteration", job=iteration_job, default_status=dg.DefaultSensorStatus.STOPPED,
           minimum_interval_seconds=120,
           description="Adds iteration N+1 (and runs it) once eval_report[N] of the newest iteration N passes the "
                       "go/no-go. Off by default: turn it on in the UI (Automation) to let the loop continue.")
def next_iteration(context: dg.SensorEvaluationContext, profile: ProfileResource) -> dg.SensorResult | dg.SkipReason:
    keys = [k for k in iteration_keys(context.instance) if k.isdigit()]
    if not keys:
        return dg.SkipReason("no iteration partition yet: add iteration 0")
    n = max(int(k) for k in keys)
    if str(n) not in context.instance.get_materialized_partitions(dg.AssetKey("eval_report")):
        return dg.SkipReason(f"eval_report[{n}] is not materialised yet")
    st = stage(profile.load())
    verdict, cv = eval_report_check(st.profile, st.layout, n)
    if verdict is None or not verdict.go:
        return dg.SkipReason(f"iteration {n} does not pass the go/no-go: {cv.summary()}")
    nxt = str(n + 1)
    context.log.info(f"iteration {n} passes the go/no-go ({verdict.summary()}): adding iteration {nxt}")
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=nxt, run_key=f"iteration-{nxt}")],
        dynamic_partitions_requests=[iterations.build_add_request([nxt])],
    )
