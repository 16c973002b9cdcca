"""``trajectories[N]``: best-first search of the selected corpus theorems with iteration N's model, fanned out
over theorem shards: a split step, one search step per shard (GPU tags and pool: a pod of its own on
Kubernetes), and a merge step that materialises the asset."""

from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from burnqed_core.data.theorems import resolve_spec
from burnqed_core.loop import shards, stages
from burnqed_core.loop.inputs import UsedPartitions, earlier_iterations, require, search_selection, trajectory_dirs
from burnqed_core.loop.layout import IterationLayout
from burnqed_core.loop.markers import fingerprint
from burnqed_core.loop.shards import ShardResult, ShardSpec
from burnqed_core.loop.stages import StageResult
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import LeanResource, PolicyResource, ProfileResource
from burnqed_pipeline.metadata import served_metadata
from burnqed_pipeline.stage import (
    EBM_WIRED,
    Stage,
    first_served,
    logs_to,
    result,
    shard_step,
    stage,
    with_missing_shards,
)


@dataclass(frozen=True)
class _Inputs:
    st: Stage
    n: int
    it: IterationLayout
    merged: Path
    ebm_dir: Path | None
    earlier: list[IterationLayout]
    fp: str


def _inputs(context: dg.OpExecutionContext, profile: ProfileResource) -> _Inputs:
    st, n = stage(profile.load()), partition_iteration(context)
    me, it = f"trajectories[{n}]", st.layout.iteration(n)
    merged = require(it.merged, "merged_model", n, me)
    ebm_dir = require(it.ebm, "ebm", n, me) if EBM_WIRED and n > 0 else None
    earlier = earlier_iterations(st.layout, n, "trajectories", me)
    fp = fingerprint("trajectories", st.profile, {"merged": merged, "ebm": ebm_dir, "corpus": resolve_spec(
        st.profile.data.corpus), "earlier": [e.trajectories for e in earlier]}, {"n": n})
    return _Inputs(st, n, it, merged, ebm_dir, earlier, fp)


_DEPS = ["merged_model", *(["ebm"] if EBM_WIRED else [])]


# one Nothing input per upstream asset (a fan-in list of graph inputs cannot be planned inside a larger job)
@dg.op(ins={k: dg.In(dg.Nothing) for k in _DEPS}, out=dg.DynamicOut(ShardSpec))
def split_trajectories(context: dg.OpExecutionContext, profile: ProfileResource):
    """The theorems of iteration N (not searched by iterations < N) cut into ``pipeline.shard_size`` shards."""
    x = _inputs(context, profile)
    withheld = stages.search_withheld(x.st.profile, x.st.layout.model)
    sel = search_selection(x.st.profile, x.n, trajectory_dirs(x.earlier), withheld)
    specs, saved = shards.plan("trajectories", x.n, x.it.trajectories, x.fp, sel.theorems,
                               x.st.profile.pipeline.shard_size,
                               {"merged": str(x.merged), "ebm": str(x.ebm_dir) if x.ebm_dir else None})
    context.log.info(f"trajectories[{x.n}]: {len(sel.theorems)} theorems in {len(specs)} shard(s)"
                     f"{' (finished earlier: every shard is read back)' if saved else ''} ({sel.stats.model_dump()})")
    for spec in specs:
        yield dg.DynamicOutput(spec, mapping_key=spec.key)


def _run_shard(context: dg.OpExecutionContext, spec: ShardSpec, profile: ProfileResource, lean: LeanResource,
               policy: PolicyResource) -> ShardResult:
    prof = profile.load()
    merged, ebm = Path(str(spec.inputs["merged"])), spec.inputs.get("ebm")

    async def compute(work: Path) -> StageResult:
        pol, served = await policy.for_model(merged, spec.iteration)
        res = await stages.trajectories(prof, spec.iteration, pol, await lean.env(), spec.theorems, work, merged,
                                        ebm_dir=Path(ebm) if ebm else None)
        return res.model_copy(update={"metrics": {**res.metrics, "served": served}})

    return shard_step(context, spec, compute, "trajectories", "searched")


@dg.op(pool=GPU_POOL, tags=GPU_OP_TAGS)
def search_shard(context: dg.OpExecutionContext, spec: ShardSpec, profile: ProfileResource, lean: LeanResource,
                 policy: PolicyResource) -> ShardResult:
    """Search one shard (`stages.trajectories` on its theorems); resumes its flushed parts after a kill."""
    return _run_shard(context, spec, profile, lean, policy)


@dg.op
def merge_trajectories(context: dg.OpExecutionContext, results: list[ShardResult], profile: ProfileResource,
                       lean: LeanResource, policy: PolicyResource) -> dg.MaterializeResult:
    """Merge the shards into the iteration's trajectory set (``search.traj``, at iteration 0 ``noisy.traj``).
    A planned shard whose step never ran in this run (re-execution from failure of a killed run) is run here."""
    x = _inputs(context, profile)
    root = x.it.trajectories
    results = with_missing_shards(context, root, x.fp, results, "trajectories", x.n,
                                  lambda spec: _run_shard(context, spec, profile, lean, policy))

    def merge() -> StageResult:
        res = stages.merge_trajectories(x.st.profile, x.n, shards.gather(root, x.fp, results), root)
        return res.model_copy(update={"seconds": round(sum(r.seconds for r in results), 1),
                                      "metrics": {**res.metrics, "served": first_served(results)}})

    with logs_to(context):
        res = shards.finish_stage(root, x.fp, merge)
    used = UsedPartitions(same_iteration=[f"merged_model[{x.n}]", *([f"ebm[{x.n}]"] if x.ebm_dir else [])],
                          earlier={"trajectories": [e.iteration for e in x.earlier]})
    plan = shards.read_plan(root)
    return result(context, res, used, {"selected_theorems": len(plan.theorems) if plan else 0,
                                       "shards": len(results),
                                       **served_metadata(res.metrics.get("served", {}))})


_DOC = """Every node of the searches (Parquet, resumable), on theorems not searched by iterations < N; iteration 0
searches a second time at the noise temperature. One step per shard of ``pipeline.shard_size`` theorems."""
_GRAPH = dict(partitions_def=iterations, group_name="iteration", kinds={"parquet"}, description=_DOC)

if EBM_WIRED:
    @dg.graph_asset(ins={"merged_model": dg.AssetIn(dagster_type=dg.Nothing),
                         "ebm": dg.AssetIn(dagster_type=dg.Nothing)}, **_GRAPH)  # type: ignore[arg-type]
    def trajectories(merged_model, ebm):
        return merge_trajectories(split_trajectories(merged_model=merged_model, ebm=ebm).map(search_shard).collect())
else:
    @dg.graph_asset(ins={"merged_model": dg.AssetIn(dagster_type=dg.Nothing)}, **_GRAPH)  # type: ignore[arg-type]
    def trajectories(merged_model):
        return merge_trajectories(split_trajectories(merged_model=merged_model).map(search_shard).collect())
