"""``eval_report``: iteration N's evaluation on the profile's sets (``data.benchmark``, then ``eval.also``),
one `burnqed_core.eval.plan.EvalPlan` run over shards: solve rates per node budget beside the three
baselines, theorems newly solved compared with every iteration < N, report and plot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burnqed_core.eval import plan as eval_plan
from burnqed_core.eval.plan import EvalPlan
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.loop.corpus import PAIRS_FILE
from burnqed_core.loop.spec import Input, Sharded, StageContext, StageSpec
from burnqed_core.records import StageResult, Theorem

Settings = EvalSettings


def training_pairs(ctx: StageContext[EvalSettings]) -> list[Path]:
    """What iteration N's model was trained on: the base pairs and the iteration's tactic pairs."""
    return [ctx.input("base_tactic_pairs") / PAIRS_FILE, ctx.input("tactic_pairs")]


def _plan(ctx: StageContext[EvalSettings]) -> EvalPlan:
    return eval_plan.plan_sets(ctx.settings, ctx.iteration, ctx.out, ctx.input("merged_model"),
                               ebm=ctx.inputs.get("ebm"), training_pairs=training_pairs(ctx),
                               earlier=ctx.earlier_outputs(), premises=ctx.input("premise_index"),
                               premise_reranker=ctx.inputs.get("premise_reranker"))


def _select(ctx: StageContext[EvalSettings]) -> Sequence[Theorem]:
    return _plan(ctx).theorems()


async def _policy(ctx: StageContext[EvalSettings]) -> Any:
    return (await ctx.policy_for(ctx.input("merged_model")))[0]


async def _prepare(ctx: StageContext[EvalSettings]) -> None:
    await eval_plan.prepare(ctx.settings, _plan(ctx), ctx.env, progress=False, policy=lambda: _policy(ctx))


async def _shard(ctx: StageContext[EvalSettings], theorems: Sequence[Theorem], work: Path) -> StageResult:
    plan = _plan(ctx)
    policy, served = await ctx.policy_for(ctx.input("merged_model"))
    res = await eval_plan.search(ctx.settings, plan, policy, await ctx.env(), theorems, work, progress=False)
    return res.model_copy(update={"metrics": {**res.metrics, "served": served}})


def _merge(ctx: StageContext[EvalSettings], shard_dirs: Sequence[Path]) -> StageResult:
    return eval_plan.merge(ctx.settings, _plan(ctx), shard_dirs)


EVAL_REPORT = StageSpec(
    name="eval_report", gpu=True, settings=EvalSettings, earlier="eval_report",
    inputs=(Input("merged_model"), Input("automation_baselines"), Input("premise_index"),
            Input("ebm", from_iteration=1), Input("premise_reranker", from_iteration=1),
            Input("tactic_pairs", edge=False), Input("base_tactic_pairs", edge=False)),
    shards=Sharded(select=_select, prepare=_prepare, shard=_shard, merge=_merge, size=lambda p: p.pipeline.eval_shard),
    doc="Solve rate per node budget (hard split apart), the automation-only baseline, theorems newly solved "
        "compared with every iteration < N, and the comparison table and plot across iterations; from iteration 1 "
        "the premise retrieval (the prover's and (c) with retrieval's) is re-ranked by premise_reranker[N] when "
        "it trained one. One step per shard of ``pipeline.eval_shard_size`` benchmark theorems.",
)
