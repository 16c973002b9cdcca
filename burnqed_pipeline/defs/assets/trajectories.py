"""``trajectories[N]``: best-first search of the selected corpus theorems with iteration N's model."""

from typing import Any

import dagster as dg

from burnqed_core.data.theorems import resolve_spec
from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, earlier_iterations, require, search_selection, trajectory_dirs
from burnqed_core.loop.markers import fingerprint, run_stage_async
from burnqed_core.loop.stages import StageResult
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import LeanResource, PolicyResource, ProfileResource
from burnqed_pipeline.metadata import served_metadata
from burnqed_pipeline.runtime import get_runtime
from burnqed_pipeline.stage import EBM_WIRED, logs_to, progress, result, searched_progress, stage


@dg.asset(partitions_def=iterations, group_name="iteration", deps=["merged_model", *(["ebm"] if EBM_WIRED else [])],
          pool=GPU_POOL, op_tags=GPU_OP_TAGS, kinds={"parquet"})
def trajectories(context: dg.AssetExecutionContext, profile: ProfileResource, lean: LeanResource,
                 policy: PolicyResource) -> dg.MaterializeResult:
    """Every node of the searches (Parquet, resumable), on theorems not searched by iterations < N; iteration 0
    searches a second time at the noise temperature."""
    st, n = stage(profile.load()), partition_iteration(context)
    me, it = f"trajectories[{n}]", st.layout.iteration(n)
    merged = require(it.merged, "merged_model", n, me)
    ebm_dir = require(it.ebm, "ebm", n, me) if EBM_WIRED and n > 0 else None
    earlier = earlier_iterations(st.layout, n, "trajectories", me)
    sel = search_selection(st.profile, n, trajectory_dirs(earlier))
    fp = fingerprint("trajectories", st.profile, {"merged": merged, "ebm": ebm_dir, "corpus": resolve_spec(
        st.profile.data.corpus), "earlier": [e.trajectories for e in earlier]}, {"n": n})

    async def search() -> StageResult:
        pol, served = await policy.for_model(merged, n)
        kw: dict[str, Any] = {"ebm_dir": ebm_dir} if EBM_WIRED else {}
        res = await stages.trajectories(st.profile, n, pol, await lean.env(), sel.theorems, it.trajectories,
                                        merged, **kw)
        return res.model_copy(update={"metrics": {**res.metrics, "served": served}})

    context.log.info(f"{me}: searching {len(sel.theorems)} theorems ({sel.stats.model_dump()})")
    with logs_to(context), progress(context, searched_progress(it.trajectories, len(sel.theorems))):
        res = get_runtime().run(run_stage_async(it.trajectories, fp, search))
    used = UsedPartitions(same_iteration=[f"merged_model[{n}]", *([f"ebm[{n}]"] if ebm_dir else [])],
                          earlier={"trajectories": [e.iteration for e in earlier]})
    return result(context, res, used, {"selected_theorems": len(sel.theorems), **served_metadata(res.metrics.get(
        "served", {}))})
