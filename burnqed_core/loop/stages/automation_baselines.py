"""``automation_baselines``: which single automation tactic closes each benchmark theorem (null: automation-
resistant, "hard"), read from the ``automation.json`` beside the benchmark where it is complete, else measured."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from burnqed_core.config import DataConfig, EvalConfig, LeanConfig
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.corpus import (
    benchmark_slug,
)
from burnqed_core.loop.spec import StageContext, StageSpec
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult


class Data(Projection):
    SOURCE = DataConfig
    benchmark: str


class Eval(Projection):
    SOURCE = EvalConfig
    sample: int | None


class Settings(StageSettings):
    """The benchmark (its fixed sample of ``eval.sample`` when set: the theorems the eval reports), and the Lean
    that measures what its automation.json does not give."""

    data: Data
    eval: Eval
    lean: LeanConfig


async def automation_baselines(settings: Settings, env: Callable[[], Awaitable[ProofEnv]],
                               out_dir: Path) -> StageResult:
    """Per benchmark, the automation-only baseline (which single tactic closes each theorem): read from the
    ``automation.json`` beside the benchmark where it covers every theorem, measured in Lean for the rest
    (`burnqed_core.eval.baselines.single.benchmark_automation`)."""
    from burnqed_core.eval.baselines.single import benchmark_automation, write_automation

    spec = settings.data.benchmark
    known, measured_now = await benchmark_automation(spec, settings.eval.sample, env)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_automation(known, out_dir / f"{benchmark_slug(spec)}.json", merge=False)
    closed = sum(v is not None for v in known.values())
    return StageResult(stage="automation_baselines", path=str(out_dir),
                       summary=f"{spec}: automation alone closes {closed}/{len(known)} theorems "
                               f"({len(known) - closed} hard; {measured_now} measured now, the rest from file)",
                       metrics={"benchmark": spec, "theorems": len(known), "closed": closed,
                                "hard": len(known) - closed, "measured_now": measured_now})


async def _run(ctx: StageContext[Settings]) -> StageResult:
    return await automation_baselines(ctx.settings, ctx.env, ctx.out)


AUTOMATION_BASELINES = StageSpec(
    name="automation_baselines", partitioned=False, settings=Settings, run=_run,
    doc="Which single automation tactic closes each benchmark theorem (null: automation-resistant, \"hard\"); "
        "every solve rate is reported beside it. Read from the benchmark's automation.json where complete, else "
        "measured in Lean.",
)
