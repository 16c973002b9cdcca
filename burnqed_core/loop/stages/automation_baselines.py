"""The shared base: which single automation tactic closes each benchmark theorem."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.corpus import (
    benchmark_slug,
)
from burnqed_core.loop.spec import StageContext, StageSpec
from burnqed_core.loop.stages.shared import LEAN
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


async def automation_baselines(profile: Profile, env: Callable[[], Awaitable[ProofEnv]], out_dir: Path) -> StageResult:
    """Per benchmark, the automation-only baseline (which single tactic closes each theorem): read from the
    ``automation.json`` beside the benchmark where it covers every theorem, measured in Lean for the rest."""
    from burnqed_core.data.theorems import automation_map, load_theorems
    from burnqed_core.lean.baseline import automation_baseline, write_automation

    spec = profile.data.benchmark
    theorems = load_theorems(spec)
    known = {k: v for k, v in (automation_map(spec) or {}).items() if k in {t.name for t in theorems}}
    missing = [t for t in theorems if t.name not in known]
    if missing:
        measured, _report = await automation_baseline(await env(), missing, progress=True)
        known.update(measured)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_automation(known, out_dir / f"{benchmark_slug(spec)}.json", merge=False)
    closed = sum(v is not None for v in known.values())
    return StageResult(stage="automation_baselines", path=str(out_dir),
                       summary=f"{spec}: automation alone closes {closed}/{len(known)} theorems "
                               f"({len(known) - closed} hard; {len(missing)} measured now, the rest from file)",
                       metrics={"benchmark": spec, "theorems": len(known), "closed": closed,
                                "hard": len(known) - closed, "measured_now": len(missing)})


def _benchmark_files(profile: Profile) -> Mapping[str, Path | None]:
    from burnqed_core.data.theorems import AUTOMATION_FILE, resolve_spec

    bench = resolve_spec(profile.data.benchmark)
    return {"benchmark": bench, "automation_file": (bench if bench.is_dir() else bench.parent) / AUTOMATION_FILE}


async def _automation_baselines(ctx: StageContext) -> StageResult:
    return await automation_baselines(ctx.settings, ctx.env, ctx.out)


AUTOMATION_BASELINES = StageSpec(
    name="automation_baselines", out="baselines", partitioned=False, kinds=frozenset({"json"}),
    doc="Which single automation tactic closes each benchmark theorem (null: automation-resistant, \"hard\"); "
        "every solve rate is reported beside it. Read from the benchmark's automation.json where complete, else "
        "measured in Lean.",
    settings=("data.benchmark", LEAN), files=_benchmark_files, run=_automation_baselines,
)
