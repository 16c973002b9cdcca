"""Asset checks of an iteration's stages (blocking: a failure stops the run's downstream steps, and through
``eval_report``'s automation condition keeps later runs from evaluating on top of it).

Thin: each check reads its stage's outputs through `burnqed_core.loop.checks` and shows the
`CheckVerdict`: every figure beside its threshold (a markdown table and one number each), the reasons.

* ``tactic_pairs``: no benchmark theorem in the pairs, split disjoint by theorem, no sorry/admit, non-empty;
* ``embeddings``: no collapse (variance, linear probe, centroid separation: seed 002's red lines);
* ``ebm``: rank-1 above chance, rank-1 at depth 4+ above the red line, temperature not pinned, and, for a
  head trained jointly with the adapter (``ebm.joint``), a run its monitor did not abort (iteration 0 trains
  no EBM: passes, saying so);
* ``eval_report``: the go/no-go against iteration N-1 (regression, no improvement, EBM with no gain).
"""


import re
from collections.abc import Callable

import dagster as dg

from burnqed_core.loop import checks as core
from burnqed_core.verdict import CheckVerdict
from burnqed_pipeline.defs.partitions import iterations, partition_iteration
from burnqed_pipeline.resources import ProfileResource
from burnqed_pipeline.stage import stage


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def check_result(v: CheckVerdict) -> dg.AssetCheckResult:
    """The verdict as a check result: ``verdict`` (one line), ``figures`` (markdown table), each figure's
    value as a number (``<name>``) beside its threshold (``<name>_threshold``), and the verdict as JSON."""
    md: dict[str, object] = {"verdict": v.summary(), "figures": dg.MetadataValue.md(v.markdown() or "(none)")}
    for f in v.figures:
        if f.value is not None:
            md[_key(f.name)] = float(f.value)
        md[f"{_key(f.name)}_threshold"] = float(f.threshold)
    md["verdict_json"] = dg.MetadataValue.json(v.model_dump(mode="json"))
    return dg.AssetCheckResult(passed=v.passed, metadata=md, description=v.summary()[:1000])


def _run(context: dg.AssetCheckExecutionContext, profile: ProfileResource,
         judge: Callable[..., CheckVerdict]) -> dg.AssetCheckResult:
    st, n = stage(profile.load()), partition_iteration(context)  # type: ignore[arg-type]
    v = judge(st.profile, st.layout, n)
    (context.log.info if v.passed else context.log.warning)(v.summary())
    return check_result(v)


@dg.asset_check(asset="tactic_pairs", name="tactic_pairs_clean", blocking=True, partitions_def=iterations,
                description="No benchmark theorem in the training pairs (by name, statement, root goal), train/val "
                            "split disjoint by theorem, no sorry/admit proof, non-empty.")
def tactic_pairs_clean(context: dg.AssetCheckExecutionContext, profile: ProfileResource) -> dg.AssetCheckResult:
    return _run(context, profile, core.tactic_pairs_check)


def _eval_go(profile: object, layout: object, n: int) -> CheckVerdict:
    return core.eval_report_check(profile, layout, n)[1]  # type: ignore[arg-type]


@dg.asset_check(asset="eval_report", name="go_no_go", blocking=True, partitions_def=iterations,
                description="Go/no-go against iteration N-1: no regression beyond eval.regression_pp, some "
                            "improvement, the EBM gains over its ablation.")
def go_no_go(context: dg.AssetCheckExecutionContext, profile: ProfileResource) -> dg.AssetCheckResult:
    return _run(context, profile, _eval_go)


@dg.asset_check(asset="embeddings", name="no_collapse", blocking=True, partitions_def=iterations,
                description="Seed 002's collapse red lines: variance, linear probe >= 0.65, centroid "
                            "separation (raw >= 3.0 for mean pooling; >= 60% of iteration N-1's).")
def no_collapse(context: dg.AssetCheckExecutionContext, profile: ProfileResource) -> dg.AssetCheckResult:
    return _run(context, profile, core.embeddings_check)

@dg.asset_check(asset="ebm", name="ebm_healthy", blocking=True, partitions_def=iterations,
                description="Rank-1 above chance, rank-1 at depth 4+ >= 0.25, temperature not pinned at a "
                            "bound, no abort of a joint LoRA + EBM run (iteration 0: no EBM, passes).")
def ebm_healthy(context: dg.AssetCheckExecutionContext, profile: ProfileResource) -> dg.AssetCheckResult:
    return _run(context, profile, core.ebm_check)
