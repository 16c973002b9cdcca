"""``ebm[N]``: the energy head trained on embeddings[N] and the trajectory labels (none at iteration 0).

Defined only once `burnqed_core.loop.stages` has the EBM stages (`EBM_WIRED`)."""

import dagster as dg

from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, earlier_iterations, require, trajectory_dirs
from burnqed_core.loop.markers import fingerprint, run_stage
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import ProfileResource
from burnqed_pipeline.stage import EBM_WIRED, logs_to, result, stage


def _ebm(context: dg.AssetExecutionContext, profile: ProfileResource) -> dg.MaterializeResult:
    """Energy-head weights, config and metrics (energy gap, rank-1 accuracy, embedding separation); iteration 0
    has no EBM."""
    st, n = stage(profile.load()), partition_iteration(context)
    me, it = f"ebm[{n}]", st.layout.iteration(n)
    emb = require(it.embeddings, "embeddings", n, me)
    earlier = earlier_iterations(st.layout, n, "trajectories", me)
    fp = fingerprint("ebm", st.profile, {"embeddings": emb, "earlier": [e.trajectories for e in earlier]}, {"n": n})
    with logs_to(context):
        res = run_stage(it.ebm, fp, lambda: stages.ebm(st.profile, n, emb, trajectory_dirs(earlier), it.ebm))
    used = UsedPartitions(same_iteration=[f"embeddings[{n}]"], earlier={"trajectories": [e.iteration for e in earlier]})
    return result(context, res, used)


if EBM_WIRED:
    ebm = dg.asset(name="ebm", partitions_def=iterations, group_name="iteration", deps=["embeddings"],
                   pool=GPU_POOL, op_tags=GPU_OP_TAGS, kinds={"pytorch"})(_ebm)
