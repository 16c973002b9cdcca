"""``nightly_eval``: iteration N evaluated again, on a date, on the profile's sets and ``nightly.extra_benchmarks``
(the pipeline's nightly schedule picks the newest complete iteration): the eval's own plan
(`burnqed_core.eval.plan.plan_sets`, ``eval.also_sample`` included) into ``iter_N/nightly_eval/<YYYY-MM-DD>/``,
resumable within the day. Not a stage of ``burnqed loop``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from zoneinfo import ZoneInfo

from burnqed_core.config import NightlyConfig
from burnqed_core.eval import plan as eval_plan
from burnqed_core.eval.settings import EvalSettings
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.eval_report import training_pairs
from burnqed_core.projection import Projection
from burnqed_core.records import StageResult


class Nightly(Projection):
    SOURCE = NightlyConfig
    extra_benchmarks: list[str]


class Settings(EvalSettings):
    """The eval's settings and the extra sets of the nightly run."""

    nightly: Nightly


def report_day(timezone: str, when: dt.datetime | None = None) -> str:
    """``YYYY-MM-DD`` of ``when`` (default now; naive = UTC) in ``timezone`` (``nightly.timezone``)."""
    when = when or dt.datetime.now(dt.UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(ZoneInfo(timezone)).date().isoformat()


def newest_complete(keys: Iterable[str], complete: Iterable[str]) -> int | None:
    """The highest iteration among ``keys`` that is in ``complete`` (e.g. whose merged model is
    materialised); None when there is none."""
    done = set(complete)
    numbers = [int(k) for k in keys if k.isdigit() and k in done]
    return max(numbers) if numbers else None


async def _run(ctx: StageContext[Settings]) -> StageResult:
    s = ctx.settings
    plan = eval_plan.plan_sets(s, ctx.iteration, ctx.out, ctx.input("merged_model"), ebm=ctx.inputs.get("ebm"),
                               training_pairs=training_pairs(ctx), extra=s.nightly.extra_benchmarks,
                               premises=ctx.input("premise_index"), premise_reranker=ctx.inputs.get("premise_reranker"))
    policy, _served = await ctx.policy_for(ctx.input("merged_model"))
    return await eval_plan.run(s, plan, policy, ctx.env, progress=False)


NIGHTLY_EVAL = StageSpec(
    name="nightly_eval", gpu=True, dated=True, settings=Settings, run=_run,
    inputs=(Input("merged_model"), Input("automation_baselines"), Input("premise_index"),
            Input("ebm", from_iteration=1), Input("premise_reranker", from_iteration=1),
            Input("tactic_pairs", edge=False), Input("base_tactic_pairs", edge=False)),
    doc="Iteration N evaluated again on the profile's sets and nightly.extra_benchmarks, one folder per day: "
        "iter_N/nightly_eval/<YYYY-MM-DD>/ (report.md, summary.json, results.parquet, solve_rate.png).",
)
