"""``nightly_eval[N]``: iteration N re-evaluated on the benchmark and the profile's extra benchmarks, a dated
report each (the ``nightly_eval_schedule`` picks the newest complete iteration)."""

import datetime as dt
from typing import Any

import dagster as dg

from burnqed_core.data.theorems import resolve_spec
from burnqed_core.ebm.train import has_ebm
from burnqed_core.errors import BurnqedError
from burnqed_core.eval.report import REPORT_FILE, format_markdown, read_summary
from burnqed_core.loop import corpus, nightly
from burnqed_core.loop.inputs import require
from burnqed_core.loop.markers import run_stage_async
from burnqed_core.records import StageResult
from burnqed_pipeline.defs.jobs import NIGHTLY_DATE_TAG, NIGHTLY_GROUP
from burnqed_pipeline.defs.partitions import GPU_OP_TAGS, GPU_POOL, iterations, partition_iteration
from burnqed_pipeline.defs.resources import LeanResource, PolicyResource, ProfileResource
from burnqed_pipeline.runtime import get_runtime
from burnqed_pipeline.stage import logs_to, stage


def _day(context: dg.AssetExecutionContext, timezone: str) -> str:
    day = context.run.tags.get(NIGHTLY_DATE_TAG) or nightly.report_day(timezone)
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        raise BurnqedError(f"run tag {NIGHTLY_DATE_TAG}={day!r}: expected a date YYYY-MM-DD") from None
    return day


@dg.asset(partitions_def=iterations, group_name=NIGHTLY_GROUP,
          deps=["merged_model", "automation_baselines", "ebm"],
          pool=GPU_POOL, op_tags=GPU_OP_TAGS, kinds={"markdown"})
def nightly_eval(context: dg.AssetExecutionContext, profile: ProfileResource, lean: LeanResource,
                 policy: PolicyResource) -> dg.MaterializeResult:
    """The eval stage on ``data.benchmark`` and each of ``nightly.extra_benchmarks`` with iteration N's model
    (and EBM when it has one): ``<work_dir>/nightly/<YYYY-MM-DD>/<benchmark>/report.md`` and its rows."""
    st, n = stage(profile.load()), partition_iteration(context)
    me, it = f"nightly_eval[{n}]", st.layout.iteration(n)
    merged = require(it.merged, "merged_model", n, me)
    ebm_dir = it.ebm if has_ebm(it.ebm) else None
    pairs = [p for p in (st.layout.traced / corpus.PAIRS_FILE, it.pairs) if p.exists()]
    day = _day(context, st.profile.nightly.timezone)
    md: dict[str, Any] = {"day": day, "iteration": n, "ebm": str(ebm_dir or "none")}
    for spec in nightly.benchmarks(st.profile):
        out = nightly.report_dir(st.layout.root, day, spec)
        fp = nightly.fingerprint(st.profile, spec, {"merged": merged, "ebm": ebm_dir, "benchmark": resolve_spec(spec),
                                                    "pairs": pairs}, {"n": n, "day": day})

        async def evaluate(spec: str = spec, out: Any = out) -> StageResult:
            pol, _served = await policy.for_model(merged, n)
            return await nightly.evaluate(st.profile, n, spec, pol, await lean.env(), out, merged, ebm_dir, pairs)

        with logs_to(context):
            res = get_runtime().run(run_stage_async(out, fp, evaluate))
        s = read_summary(out)
        key = nightly.slug(spec)
        context.log.info(f"{me} on {spec} ({'unchanged, skipped' if res.skipped else f'{res.seconds:.1f} s'}): "
                         f"{s.cumulative} solved")
        md[f"{key}.report"] = dg.MetadataValue.path(str(out / REPORT_FILE))
        md[f"{key}.rate"] = round(s.cumulative.rate, 4)
        md[f"{key}.hard_rate"] = round(s.cumulative_hard.rate, 4)
        md[f"{key}.table"] = dg.MetadataValue.md(format_markdown(s))
    return dg.MaterializeResult(metadata=md)
