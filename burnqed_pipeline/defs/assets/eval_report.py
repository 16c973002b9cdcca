"""``eval_report[N]``: iteration N on the held-out benchmark, beside the automation-only baseline."""

from typing import Any

import dagster as dg

from burnqed_core.eval.report import read_summary
from burnqed_core.loop import stages
from burnqed_core.loop.inputs import UsedPartitions, benchmark_theorems, earlier_iterations, earlier_solved, require
from burnqed_core.loop.markers import fingerprint, run_stage_async
from burnqed_core.loop.stages import StageResult
from burnqed_pipeline.defs.automation import EVAL_REPORT_CONDITION
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import LeanResource, PolicyResource, ProfileResource
from burnqed_pipeline.metadata import eval_metadata, served_metadata
from burnqed_pipeline.runtime import get_runtime
from burnqed_pipeline.stage import EBM_WIRED, logs_to, progress, result, searched_progress, stage


@dg.asset(partitions_def=iterations, group_name="iteration",
          deps=["merged_model", "automation_baselines", *(["ebm"] if EBM_WIRED else [])],
          pool=GPU_POOL, op_tags=GPU_OP_TAGS, kinds={"markdown"}, automation_condition=EVAL_REPORT_CONDITION)
def eval_report(context: dg.AssetExecutionContext, profile: ProfileResource, lean: LeanResource,
                policy: PolicyResource) -> dg.MaterializeResult:
    """Solve rate per node budget (hard split apart), the automation-only baseline, theorems newly solved
    compared with every iteration < N, and the comparison table and plot across iterations."""
    st, n = stage(profile.load()), partition_iteration(context)
    me, it = f"eval_report[{n}]", st.layout.iteration(n)
    merged = require(it.merged, "merged_model", n, me)
    ebm_dir = require(it.ebm, "ebm", n, me) if EBM_WIRED and n > 0 else None
    baselines = require(st.layout.baselines, "automation_baselines", None, me)
    earlier = earlier_iterations(st.layout, n, "eval", me)
    bench = benchmark_theorems(st.profile)
    fp = fingerprint("eval_report", st.profile, {"merged": merged, "ebm": ebm_dir, "baselines": baselines,
                                                 "pairs": it.pairs,
                                                 "earlier": [e.eval for e in earlier]}, {"n": n})

    async def evaluate() -> StageResult:
        pol, served = await policy.for_model(merged, n)
        kw: dict[str, Any] = {"ebm_dir": ebm_dir} if EBM_WIRED else {}
        # automation=None: the stage measures both baselines (cached per benchmark under paths.home)
        res = await stages.eval_report(st.profile, n, pol, await lean.env(), bench, None, it.eval, merged,
                                       earlier_solved=earlier_solved(earlier), progress=False,
                                       training_pairs=[st.layout.traced / stages.PAIRS_FILE, it.pairs], **kw)
        return res.model_copy(update={"metrics": {**res.metrics, "served": served}})

    with logs_to(context), progress(context, searched_progress(it.eval, len(bench))):
        res = get_runtime().run(run_stage_async(it.eval, fp, evaluate))
    used = UsedPartitions(same_iteration=[f"merged_model[{n}]", "automation_baselines",
                                          *([f"ebm[{n}]"] if ebm_dir else [])],
                          earlier={"eval_report": [e.iteration for e in earlier]})
    summaries = [read_summary(e.eval) for e in earlier] + [read_summary(it.eval)]
    return result(context, res, used, {**eval_metadata(summaries), **served_metadata(res.metrics.get("served", {}))})
