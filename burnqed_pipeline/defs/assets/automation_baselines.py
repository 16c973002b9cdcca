"""``automation_baselines``: what Lean's automation alone proves, per benchmark."""

import dagster as dg

from burnqed_core.data.theorems import AUTOMATION_FILE, resolve_spec
from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions
from burnqed_core.loop.markers import fingerprint, run_stage_async
from burnqed_pipeline.defs.resources import LeanResource, ProfileResource
from burnqed_pipeline.runtime import get_runtime
from burnqed_pipeline.stage import logs_to, result, stage


@dg.asset(group_name="base", kinds={"json"})
def automation_baselines(context: dg.AssetExecutionContext, profile: ProfileResource,
                         lean: LeanResource) -> dg.MaterializeResult:
    """Which single automation tactic closes each benchmark theorem (null: automation-resistant, "hard");
    every solve rate is reported beside it. Read from the benchmark's automation.json where complete, else
    measured in Lean."""
    st = stage(profile.load())
    spec = st.profile.data.benchmark
    bench = resolve_spec(spec)
    known = (bench if bench.is_dir() else bench.parent) / AUTOMATION_FILE
    fp = fingerprint("automation_baselines", st.profile, {"benchmark": bench, "automation_file": known})
    out = st.layout.baselines
    with logs_to(context):
        res = get_runtime().run(run_stage_async(out, fp, lambda: stages.automation_baselines(st.profile, lean.env,
                                                                                             out)))
    return result(context, res, UsedPartitions(same_iteration=[], earlier={}))
