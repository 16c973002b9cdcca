"""Iteration N's evaluation on the held-out sets, over shards."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.loop import corpus
from burnqed_core.loop.inputs import earlier_solved, eval_theorems
from burnqed_core.loop.spec import Input, Sharded, StageContext, StageSpec
from burnqed_core.loop.stages.shared import LEAN
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)


def _training_pairs(ctx: StageContext) -> list[Path]:
    return [ctx.input("base_tactic_pairs") / corpus.PAIRS_FILE, ctx.input("tactic_pairs")]


def _eval_sets(ctx: StageContext) -> dict[str, list[Theorem]]:
    return eval_theorems(ctx.settings)


async def _eval_prepare(ctx: StageContext) -> None:
    from burnqed_core.eval import steps

    for spec, theorems in _eval_sets(ctx).items():  # automation=None: both baselines measured or read from cache
        baselines = await steps.eval_prepare(steps.on_benchmark(ctx.settings, spec), ctx.iteration, ctx.env,
                                             theorems, None, _training_pairs(ctx), progress=False)
        steps.save_baselines(steps.set_out(ctx.out, ctx.settings, spec), baselines)


async def _eval_shard(ctx: StageContext, theorems: Sequence[Theorem], work: Path) -> StageResult:
    from burnqed_core.eval import steps

    assert ctx.policy is not None
    merged = ctx.input("merged_model")
    pol, served = await ctx.policy(merged, ctx.iteration)
    mine = {t.name for t in theorems}
    results: list[StageResult] = []
    for spec, of_set in _eval_sets(ctx).items():
        part = [t for t in of_set if t.name in mine]
        if part:
            results.append(await steps.eval_search(
                steps.on_benchmark(ctx.settings, spec), ctx.iteration, pol, await ctx.env(), part,
                steps.load_baselines(steps.set_out(ctx.out, ctx.settings, spec)),
                steps.set_out(work, ctx.settings, spec), merged, ebm_dir=ctx.inputs.get("ebm"), progress=False))
    metrics = {k: sum(r.metrics[k] for r in results) for k in ("theorems", "rows", "proved")}
    return StageResult(stage="eval_search", iteration=ctx.iteration, path=str(work),
                       summary="; ".join(r.summary for r in results), metrics={**metrics, "served": served})


def _merge_eval(ctx: StageContext, shard_dirs: Sequence[Path]) -> StageResult:
    from burnqed_core.eval import steps

    sets = _eval_sets(ctx)
    results = []
    for spec, theorems in sets.items():
        # the shards that searched theorems of this set (a shard may hold none of them)
        dirs = [d for d in (steps.set_out(d, ctx.settings, spec) for d in shard_dirs) if steps.has_results(d)]
        out = steps.set_out(ctx.out, ctx.settings, spec)
        results.append(steps.merge_eval(
            steps.on_benchmark(ctx.settings, spec), ctx.iteration, theorems, steps.load_baselines(out), dirs, out,
            earlier_solved=earlier_solved([steps.set_out(it.eval, ctx.settings, spec) for it in ctx.earlier]),
            ebm_dir=ctx.inputs.get("ebm"), training_pairs=_training_pairs(ctx)))
    return steps.combine_sets(ctx.out, list(sets), results)


# priority 1: in one run the report goes before the iteration's trajectory search (only iteration N+1 reads
# that), so whoever watches the run sees the eval first.
# The whole `search` section, though the eval replaces `max_nodes` and `timeout_s` (eval.budgets,
# eval.timeout_s) and never reads `noisy_pass`: baseline (c)'s cache key (eval/structural.py) hashes the search
# settings as a whole, and a narrower view would dump fewer of them and miss every cached and shipped (c) file.
# The price: changing one of those three re-runs the evals.
EVAL_REPORT = StageSpec(
    name="eval_report", out="eval", gpu=True, kinds=frozenset({"markdown"}), eager=True, priority=1,
    doc="Solve rate per node budget (hard split apart), the automation-only baseline, theorems newly solved "
        "compared with every iteration < N, and the comparison table and plot across iterations. One step per "
        "shard of ``pipeline.eval_shard_size`` benchmark theorems.",
    inputs=(Input("merged_model"), Input("automation_baselines"), Input("ebm", from_iteration=1),
            Input("tactic_pairs", edge=False), Input("base_tactic_pairs", edge=False)),
    earlier="eval_report",
    settings=("eval", "search", "policy", LEAN, "data.benchmark", "data.corpus", "data.exclude_families",
              "data.trace_repo"),
    shards=Sharded(select=lambda ctx: [t for ts in _eval_sets(ctx).values() for t in ts], prepare=_eval_prepare,
                   shard=_eval_shard,
                   merge=_merge_eval, size=lambda p: p.pipeline.eval_shard, verb="evaluated"),
    extras=("served", "eval_table"),
)
