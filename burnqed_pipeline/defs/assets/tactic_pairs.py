"""``tactic_pairs[N]``: the training data of iteration N."""

import dagster as dg

from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, earlier_iterations, require, trajectory_dirs
from burnqed_core.loop.markers import fingerprint, run_stage
from burnqed_pipeline.defs.partitions import iterations, partition_iteration
from burnqed_pipeline.defs.resources import ProfileResource
from burnqed_pipeline.ordering import wait_for_earlier_iterations
from burnqed_pipeline.stage import logs_to, result, stage


@dg.asset(partitions_def=iterations, group_name="iteration", deps=["base_tactic_pairs", "base_model"],
          kinds={"parquet"})
def tactic_pairs(context: dg.AssetExecutionContext, profile: ProfileResource) -> dg.MaterializeResult:
    """Train/val pairs split by theorem (the split ``base_model`` drew before pre-training): the base pairs at
    iteration 0; from N > 0 a base subsample mixed with the upsampled positive steps of the trajectories of every
    iteration < N (read from the run directory), at most ``data.trajectory_max_share`` of the mix.
    Under a backfill it first waits for runs still materialising earlier iterations (`burnqed_pipeline.ordering`)."""
    st, n = stage(profile.load()), partition_iteration(context)
    me = f"tactic_pairs[{n}]"
    base = require(st.layout.traced, "base_tactic_pairs", None, me)
    model = require(st.layout.model, "base_model", None, me)
    wait_for_earlier_iterations(context, st.layout, n, me)  # a backfill's later partitions wait for earlier ones
    earlier = earlier_iterations(st.layout, n, "trajectories", me)
    trajs = trajectory_dirs(earlier)
    out = st.layout.iteration(n).pairs
    fp = fingerprint("tactic_pairs", st.profile, {"base": base, "model": model,
                                                  "trajectories": [e.trajectories for e in earlier]}, {"n": n})
    with logs_to(context):
        res = run_stage(out, fp, lambda: stages.tactic_pairs(st.profile, n, stages.base_pairs(base), trajs, out,
                                                             stages.base_model_path(model),
                                                             split=stages.read_base_split(model)))
    used = UsedPartitions(same_iteration=["base_tactic_pairs", "base_model"],
                          earlier={"trajectories": [e.iteration for e in earlier]})
    return result(context, res, used)
