"""``base_tactic_pairs``: the shared base corpus as (state, tactic) pairs: its proofs replayed in Lean (tiny),
LeanDojo Benchmark 4 files, or a repository traced by LeanDojo (prod)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from burnqed_core import reads
from burnqed_core.config import DataConfig, LeanConfig, PathsConfig
from burnqed_core.errors import DataError
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.corpus import (
    PAIRS_FILE,
    corpus_theorems,
    leandojo_corpus,
)
from burnqed_core.loop.spec import StageContext, StageSpec
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.record_io import write_parquet
from burnqed_core.records import StageResult, TacticPair

log = logging.getLogger(__name__)


class Data(Projection):
    SOURCE = DataConfig
    corpus: str
    exclude_families: list[str]
    trace_repo: str | None
    trace_commit: str | None


class Settings(StageSettings):
    """The corpus and where it comes from; which Lean replays it (the trace cache is keyed by Lean's
    settings), and where that cache lives (``paths``, the machine's)."""

    data: Data
    lean: LeanConfig
    paths: PathsConfig


async def trace_base(settings: Settings, env: ProofEnv, out_dir: Path) -> StageResult:
    """Replay the known proofs of the training corpus into tactic pairs."""
    from burnqed_core.lean.trace_cache import CACHE_DIR, TraceCache
    from burnqed_core.lean.tracing import trace_theorems
    from burnqed_core.search.job import lean_version

    theorems = [t for t in corpus_theorems(settings) if t.proof]
    where = settings.paths.trace_cache or Path(settings.paths.home) / CACHE_DIR
    cache = TraceCache(Path(where), lean_version(settings, env), settings.lean.model_dump(mode="json"))
    cached, to_trace = cache.split(theorems)
    if cached:
        log.info("trace: %d of %d corpus theorems from the trace cache (%s), %d to trace", len(cached),
                 len(theorems), cache.directory, len(to_trace))
    traced, report = await trace_theorems(env, to_trace, progress=True, source="trace")
    by_theorem: dict[str, list[TacticPair]] = dict(cached)
    for p in traced:
        by_theorem.setdefault(p.theorem, []).append(p)
    for t in to_trace:
        if t.name in by_theorem and not any(f.theorem == t.name for f in report.failures):
            cache.put(t, by_theorem[t.name])
    pairs = [p for t in theorems for p in by_theorem.get(t.name, [])]
    if not pairs:
        raise DataError(f"tracing {settings.data.corpus} gave no tactic pairs")
    out_dir.mkdir(parents=True, exist_ok=True)
    write_parquet(pairs, out_dir / "pairs.parquet", TacticPair)
    failed = len(report.failures)
    if failed:
        log.warning("%d corpus theorems did not replay, e.g. %s", failed, report.failures[0])
    return StageResult(
        stage="trace_base", path=str(out_dir),
        summary=f"traced {report.replayed + len(cached)}/{len(theorems)} corpus theorems into {len(pairs)} tactic "
                f"pairs ({report.rechecked} whole proofs re-checked"
                + (f", {len(cached)} theorems from the trace cache" if cached else "") + ")"
                + (f", {failed} did not replay" if failed else ""),
        metrics={"theorems": len(theorems), "pairs": len(pairs), "failed": failed, "seconds": report.elapsed_s,
                 "cached": len(cached)},
    )


async def base_tactic_pairs(settings: Settings, env: Callable[[], Awaitable[ProofEnv]], out_dir: Path) -> StageResult:
    """The base corpus as tactic pairs (``pairs.parquet``), from the first source that applies:
    ``data.trace_repo`` traced by LeanDojo; ``data.corpus`` given as LeanDojo Benchmark 4 files (train and val
    splits); else the corpus's known proofs replayed in Lean (`trace_base`, the tiny profile)."""
    from burnqed_core.data.theorems.external import read_leandojo
    from burnqed_core.data.theorems.lean_dojo_trace import trace_repo

    d = settings.data
    if d.trace_repo and d.trace_commit:
        data = trace_repo(d.trace_repo, d.trace_commit, out_dir)
        where = f"LeanDojo trace of {d.trace_repo}@{d.trace_commit}"
    elif (files := leandojo_corpus(d.corpus)) is not None:
        pairs: list[TacticPair] = []
        for f in files:
            pairs.extend(read_leandojo(reads.record(f)).pairs)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_parquet(pairs, out_dir / PAIRS_FILE, TacticPair)
        return StageResult(stage="base_tactic_pairs", path=str(out_dir),
                           summary=f"{len(pairs)} tactic pairs from LeanDojo files {', '.join(f.name for f in files)}",
                           metrics={"pairs": len(pairs), "source": "leandojo", "files": [str(f) for f in files]})
    else:
        res = await trace_base(settings, await env(), out_dir)
        return res.model_copy(update={"stage": "base_tactic_pairs", "metrics": {**res.metrics, "source": "trace"}})
    if not data.pairs:
        raise DataError(f"{where} gave no tactic pairs")
    write_parquet(data.pairs, out_dir / PAIRS_FILE, TacticPair)
    return StageResult(stage="base_tactic_pairs", path=str(out_dir),
                       summary=f"{len(data.pairs)} tactic pairs of {len(data.theorems)} theorems from the {where}",
                       metrics={"pairs": len(data.pairs), "theorems": len(data.theorems), "source": "lean_dojo"})


async def _run(ctx: StageContext[Settings]) -> StageResult:
    return await base_tactic_pairs(ctx.settings, ctx.env, ctx.out)


BASE_TACTIC_PAIRS = StageSpec(
    name="base_tactic_pairs", partitioned=False, settings=Settings, run=_run,
    doc="(state, tactic) pairs of the base corpus: its proofs replayed in Lean (tiny), LeanDojo Benchmark 4 "
        "files, or a repository traced by LeanDojo (prod).",
)
