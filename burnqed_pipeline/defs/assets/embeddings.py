"""``embeddings[N]``: proof states of iterations < N encoded by merged_model[N] (the EBM's input).

Defined only once `burnqed_core.loop.stages` has the EBM stages (`EBM_WIRED`)."""

import dagster as dg

from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, earlier_iterations, require, trajectory_dirs
from burnqed_core.loop.markers import fingerprint, run_stage_async
from burnqed_core.loop.stages import StageResult
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import PolicyResource, ProfileResource
from burnqed_pipeline.runtime import get_runtime
from burnqed_pipeline.stage import EBM_WIRED, logs_to, result, stage


def _embeddings(context: dg.AssetExecutionContext, profile: ProfileResource,
                policy: PolicyResource) -> dg.MaterializeResult:
    """A resumable Parquet cache of (state, goal, vector) for the states of the trajectories of iterations < N,
    encoded by merged_model[N]."""
    st, n = stage(profile.load()), partition_iteration(context)
    me, it = f"embeddings[{n}]", st.layout.iteration(n)
    merged = require(it.merged, "merged_model", n, me)
    earlier = earlier_iterations(st.layout, n, "trajectories", me)
    fp = fingerprint("embeddings", st.profile, {"merged": merged, "earlier": [e.trajectories for e in earlier]},
                     {"n": n})

    async def encode() -> StageResult:
        pol, _served = await policy.for_model(merged, n)
        return await stages.embeddings(st.profile, n, pol, trajectory_dirs(earlier), it.embeddings)

    with logs_to(context):
        res = get_runtime().run(run_stage_async(it.embeddings, fp, encode))
    used = UsedPartitions(same_iteration=[f"merged_model[{n}]"],
                          earlier={"trajectories": [e.iteration for e in earlier]})
    return result(context, res, used)


if EBM_WIRED:
    embeddings = dg.asset(name="embeddings", partitions_def=iterations, group_name="iteration",
                          deps=["merged_model"], pool=GPU_POOL, op_tags=GPU_OP_TAGS, kinds={"parquet"})(_embeddings)
