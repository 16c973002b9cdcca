"""``eval_report[N]``: iteration N on the held-out benchmark, beside the automation-only baseline, fanned out
over benchmark shards: a split step (held-out check by name, both baselines), one eval step per shard (GPU
tags and pool: a pod of its own on Kubernetes), and a merge step (rows, report, plot) that materialises the
asset."""

from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from burnqed_core.eval.report import read_summary
from burnqed_core.loop import shards, stages
from burnqed_core.loop.inputs import UsedPartitions, benchmark_theorems, earlier_iterations, earlier_solved, require
from burnqed_core.loop.layout import IterationLayout
from burnqed_core.loop.markers import fingerprint
from burnqed_core.loop.shards import ShardResult, ShardSpec
from burnqed_core.loop.stages import StageResult
from burnqed_core.records import Theorem
from burnqed_pipeline.defs.automation import EVAL_REPORT_CONDITION
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import LeanResource, PolicyResource, ProfileResource
from burnqed_pipeline.metadata import eval_metadata, served_metadata
from burnqed_pipeline.runtime import get_runtime
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
    bench: list[Theorem]
    pairs: list[Path]
    fp: str


def _inputs(context: dg.OpExecutionContext, profile: ProfileResource) -> _Inputs:
    st, n = stage(profile.load()), partition_iteration(context)
    me, it = f"eval_report[{n}]", st.layout.iteration(n)
    merged = require(it.merged, "merged_model", n, me)
    ebm_dir = require(it.ebm, "ebm", n, me) if EBM_WIRED and n > 0 else None
    baselines = require(st.layout.baselines, "automation_baselines", None, me)
    earlier = earlier_iterations(st.layout, n, "eval", me)
    fp = fingerprint("eval_report", st.profile, {"merged": merged, "ebm": ebm_dir, "baselines": baselines,
                                                 "pairs": it.pairs,
                                                 "earlier": [e.eval for e in earlier]}, {"n": n})
    return _Inputs(st, n, it, merged, ebm_dir, earlier, benchmark_theorems(st.profile),
                   [st.layout.traced / stages.PAIRS_FILE, it.pairs], fp)


_DEPS = ["merged_model", "automation_baselines", *(["ebm"] if EBM_WIRED else [])]


# one Nothing input per upstream asset (a fan-in list of graph inputs cannot be planned inside a larger job)
@dg.op(ins={k: dg.In(dg.Nothing) for k in _DEPS}, out=dg.DynamicOut(ShardSpec))
def split_eval(context: dg.OpExecutionContext, profile: ProfileResource, lean: LeanResource):
    """The held-out check of the training pairs by name, both automation baselines (cached per benchmark under
    ``paths.home``), and the benchmark cut into ``pipeline.eval_shard_size`` shards."""
    x = _inputs(context, profile)
    specs, saved = shards.plan("eval_report", x.n, x.it.eval, x.fp, x.bench, x.st.profile.pipeline.eval_shard,
                               {"merged": str(x.merged), "ebm": str(x.ebm_dir) if x.ebm_dir else None})
    if saved is None:
        async def prepare() -> object:
            # automation=None: both baselines measured in Lean (or read from their cache)
            return await stages.eval_prepare(x.st.profile, x.n, await lean.env(), x.bench, None, x.pairs,
                                             progress=False)

        with logs_to(context):
            stages.save_baselines(x.it.eval, get_runtime().run(prepare()))
    context.log.info(f"eval_report[{x.n}]: {len(x.bench)} benchmark theorems in {len(specs)} shard(s)"
                     f"{' (finished earlier: every shard is read back)' if saved else ''}")
    for spec in specs:
        yield dg.DynamicOutput(spec, mapping_key=spec.key)


def _run_shard(context: dg.OpExecutionContext, spec: ShardSpec, profile: ProfileResource, lean: LeanResource,
               policy: PolicyResource) -> ShardResult:
    prof = profile.load()
    merged, ebm = Path(str(spec.inputs["merged"])), spec.inputs.get("ebm")

    async def compute(work: Path) -> StageResult:
        pol, served = await policy.for_model(merged, spec.iteration)
        res = await stages.eval_search(prof, spec.iteration, pol, await lean.env(), spec.theorems,
                                       stages.load_baselines(Path(spec.stage_dir)), work, merged,
                                       ebm_dir=Path(ebm) if ebm else None, progress=False)
        return res.model_copy(update={"metrics": {**res.metrics, "served": served}})

    return shard_step(context, spec, compute, "eval_report", "evaluated")


@dg.op(pool=GPU_POOL, tags=GPU_OP_TAGS)
def eval_shard(context: dg.OpExecutionContext, spec: ShardSpec, profile: ProfileResource, lean: LeanResource,
               policy: PolicyResource) -> ShardResult:
    """Evaluate one shard of the benchmark (`stages.eval_search`: resumable, every proof re-checked)."""
    return _run_shard(context, spec, profile, lean, policy)


@dg.op
def merge_eval(context: dg.OpExecutionContext, results: list[ShardResult], profile: ProfileResource,
               lean: LeanResource, policy: PolicyResource) -> dg.MaterializeResult:
    """Merge the shards' rows into the iteration's eval (results, summary, report, plot) and compare it with
    every iteration < N. A planned shard whose step never ran in this run (re-execution from failure of a
    killed run) is run here."""
    x = _inputs(context, profile)
    root = x.it.eval
    results = with_missing_shards(context, root, x.fp, results, "eval_report", x.n,
                                  lambda spec: _run_shard(context, spec, profile, lean, policy))

    def merge() -> StageResult:
        res = stages.merge_eval(x.st.profile, x.n, x.bench, stages.load_baselines(root),
                                shards.gather(root, x.fp, results), root, earlier_solved=earlier_solved(x.earlier),
                                ebm_dir=x.ebm_dir, training_pairs=x.pairs)
        return res.model_copy(update={"seconds": round(sum(r.seconds for r in results), 1),
                                      "metrics": {**res.metrics, "served": first_served(results)}})

    with logs_to(context):
        res = shards.finish_stage(root, x.fp, merge)
    used = UsedPartitions(same_iteration=[f"merged_model[{x.n}]", "automation_baselines",
                                          *([f"ebm[{x.n}]"] if x.ebm_dir else [])],
                          earlier={"eval_report": [e.iteration for e in x.earlier]})
    summaries = [read_summary(e.eval) for e in x.earlier] + [read_summary(root)]
    return result(context, res, used, {**eval_metadata(summaries), "shards": len(results),
                                       **served_metadata(res.metrics.get("served", {}))})


_DOC = """Solve rate per node budget (hard split apart), the automation-only baseline, theorems newly solved
compared with every iteration < N, and the comparison table and plot across iterations. One step per shard of
``pipeline.eval_shard_size`` benchmark theorems."""
_GRAPH = dict(partitions_def=iterations, group_name="iteration", kinds={"markdown"}, description=_DOC,
              automation_condition=EVAL_REPORT_CONDITION)
_DEP = dg.AssetIn(dagster_type=dg.Nothing)

if EBM_WIRED:
    @dg.graph_asset(ins={"merged_model": _DEP, "automation_baselines": _DEP, "ebm": _DEP},
                    **_GRAPH)  # type: ignore[arg-type]
    def eval_report(merged_model, automation_baselines, ebm):
        shards_ = split_eval(merged_model=merged_model, automation_baselines=automation_baselines, ebm=ebm)
        return merge_eval(shards_.map(eval_shard).collect())
else:
    @dg.graph_asset(ins={"merged_model": _DEP, "automation_baselines": _DEP}, **_GRAPH)  # type: ignore[arg-type]
    def eval_report(merged_model, automation_baselines):
        shards_ = split_eval(merged_model=merged_model, automation_baselines=automation_baselines)
        return merge_eval(shards_.map(eval_shard).collect())
