"""``base_tactic_pairs``: the traced base corpus every iteration trains on."""

import dagster as dg

from burnqed_core.data.theorems import resolve_spec
from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions
from burnqed_core.loop.markers import fingerprint, run_stage_async
from burnqed_pipeline.defs.resources import LeanResource, ProfileResource
from burnqed_pipeline.runtime import get_runtime
from burnqed_pipeline.stage import logs_to, result, stage


@dg.asset(group_name="base", kinds={"parquet"})
def base_tactic_pairs(context: dg.AssetExecutionContext, profile: ProfileResource,
                      lean: LeanResource) -> dg.MaterializeResult:
    """(state, tactic) pairs of the base corpus: its proofs replayed in Lean (tiny), LeanDojo Benchmark 4
    files, or a repository traced by LeanDojo (prod)."""
    st = stage(profile.load())
    d = st.profile.data
    corpus = None if d.trace_repo else resolve_spec(d.corpus)
    fp = fingerprint("base_tactic_pairs", st.profile, {"corpus": corpus})
    out = st.layout.traced
    with logs_to(context):
        res = get_runtime().run(run_stage_async(out, fp, lambda: stages.base_tactic_pairs(st.profile, lean.env, out)))
    return result(context, res, UsedPartitions(same_iteration=[], earlier={}))
