"""``trajectories``: iteration N's searches of corpus theorems not searched by iterations < N, over shards; every
node of every search is kept (Parquet, resumable), for the next iteration's pairs, embeddings and EBM."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from burnqed_core import reads
from burnqed_core.config import Curriculum, DataConfig, EvalConfig, LeanConfig, PolicyConfig, SearchConfig
from burnqed_core.errors import DataError
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop import corpus
from burnqed_core.loop.inputs import trajectory_dirs
from burnqed_core.loop.selection import Selection
from burnqed_core.loop.spec import Input, Sharded, StageContext, StageSpec
from burnqed_core.projection import Projection, StageSettings
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)


class Data(Projection):
    """Which corpus theorems are searched (`search_selection`), and the benchmark they never include."""

    SOURCE = DataConfig
    corpus: str
    exclude_families: list[str]
    benchmark: str
    search_theorems: int
    search_exercises: int | None
    seed: int
    search_failed_family_boost: float
    search_retry_failed: bool
    withhold_fraction: float
    withhold_families: list[str]
    search_pool: str | None
    search_curriculum: Curriculum
    search_retry_max: int | None


class Eval(Projection):
    """The sets the eval reports besides the benchmark: never searched (`_pool_selection`)."""

    SOURCE = EvalConfig
    also: list[str]


class Settings(StageSettings):
    """The search, the policy and the Lean it runs with, the selection; the profile's ``name``, ``seed`` and
    ``source`` (the machine's) go into the searches' run records."""

    search: SearchConfig
    policy: PolicyConfig
    lean: LeanConfig
    data: Data
    eval: Eval
    name: str
    seed: int
    source: Path | None


def search_selection(settings: Settings, n: int, earlier_trajectories: list[Path],
                     withheld: Collection[str] = ()) -> Selection:
    """The corpus theorems iteration ``n`` searches: a seeded sample that leaves out the benchmark, theorems
    searched by earlier iterations and those automation closes alone (`select_theorems`), weighted towards the
    families where earlier searches failed (``data.search_failed_family_boost``); theorems no earlier search
    proved may be searched again when never-searched ones run out (``data.search_retry_failed``). ``withheld``:
    the exercises of the base split (``data.withhold_fraction``), drawn before the other theorems, at most
    ``data.search_exercises`` of them."""
    from burnqed_core.data.theorems.load import automation_map, corpus_theorems, load_theorems
    from burnqed_core.loop.selection import family_fail_rates, select_theorems
    from burnqed_core.trajectory_io import finished_theorems, read_results

    d = settings.data
    if d.search_pool is not None:
        return _pool_selection(settings, n, earlier_trajectories)
    corpus = corpus_theorems(settings)
    benchmark = load_theorems(d.benchmark)
    easy = {k for k, v in (automation_map(d.corpus) or {}).items() if v is not None}
    searched: set[str] = set()
    verdicts: dict[str, bool] = {}  # theorem -> proved by any earlier search
    for p in earlier_trajectories:
        searched |= finished_theorems(p)  # (raises on a theorem saved twice)
        for r in read_results(p):
            if r.error != "start":  # a statement that does not elaborate says nothing about its family
                verdicts[r.theorem] = verdicts.get(r.theorem, False) or r.proved
    rates = family_fail_rates(verdicts, {t.name: t.family for t in corpus})
    retry = [name for name, ok in verdicts.items() if not ok] if d.search_retry_failed else []
    return select_theorems(corpus, d.search_theorems, d.seed + n, searched=searched,
                           held_out={t.name for t in benchmark}, easy=easy, held_out_theorems=benchmark,
                           retry=retry, family_fail_rate=rates, failed_family_boost=d.search_failed_family_boost,
                           prefer=withheld, prefer_max=d.search_exercises)


def _pool_selection(settings: Settings, n: int, earlier_trajectories: list[Path]) -> Selection:
    """`search_selection` on ``data.search_pool`` (e.g. ``core:pool``, Lean's own library): a seeded draw of
    theorems never searched, spread over the pool's families (weighted towards failing ones), with up to
    ``data.search_retry_max`` theorems that earlier searches failed on drawn first; those one automation tactic
    closes alone (the ``automation.json`` beside the pool, when there is one) are left out. Every theorem of an
    eval set (``data.benchmark``, ``eval.also``: the whole sets, not their samples) and of a held-out split
    (``dev``/``test``) is left out, by name and by split. With ``data.search_curriculum: size`` each family's
    quota takes its smallest statements first (`burnqed_core.data.theorems.core_pool.curriculum_rank`)."""
    from burnqed_core.data.theorems.load import automation_map, load_theorems
    from burnqed_core.loop.selection import family_fail_rates, select_theorems
    from burnqed_core.trajectory_io import finished_theorems, read_results

    d = settings.data
    assert d.search_pool is not None
    pool = load_theorems(d.search_pool)
    easy = {k for k, v in (automation_map(d.search_pool) or {}).items() if v is not None}
    held = [t for spec in dict.fromkeys([d.benchmark, *settings.eval.also]) for t in load_theorems(spec)]
    searched: set[str] = set()
    verdicts: dict[str, bool] = {}
    for p in earlier_trajectories:
        searched |= finished_theorems(p)
        for r in read_results(p):
            if r.error != "start":
                verdicts[r.theorem] = verdicts.get(r.theorem, False) or r.proved
    rates = family_fail_rates(verdicts, {t.name: t.family for t in pool})
    failed = sorted(name for name, ok in verdicts.items() if not ok) if d.search_retry_failed else []
    curriculum = None
    if d.search_curriculum == "size":
        from burnqed_core.data.theorems.core_pool import core_path, curriculum_rank, read_pool_rows

        path = core_path(d.search_pool) or Path(d.search_pool)
        try:
            rows = read_pool_rows(reads.record(path))
        except (OSError, ValueError):
            raise DataError(f"data.search_curriculum 'size' needs a pool of library theorems with their statement "
                            f"sizes (core:pool, or a file of its rows), not {d.search_pool}") from None
        curriculum = curriculum_rank(rows)
    return select_theorems(pool, d.search_theorems, d.seed + n, searched=searched, held_out_theorems=held,
                           easy=easy, retry=failed, family_fail_rate=rates,
                           failed_family_boost=d.search_failed_family_boost,
                           prefer=failed if d.search_retry_max is not None else (),
                           prefer_max=d.search_retry_max, curriculum=curriculum)


def _collection_settings(settings: Settings) -> Settings:
    """The settings the trajectories search with: baseline (b)'s tactics are not tried at the root
    (``search.automation.baseline_at_root`` is for the eval), so that a corpus theorem that
    ``induction x <;> simp_all [f]`` closes is proved through the policy's own ``induction x``, a step the
    next iteration trains on, rather than by one automation call that the mix leaves out."""
    auto = settings.search.automation
    if not auto.baseline_at_root:
        return settings
    search = settings.search.model_copy(update={"automation": auto.model_copy(update={"baseline_at_root": False})})
    return settings.model_copy(update={"search": search})


async def trajectories(
    settings: Settings,
    iteration: int,
    policy: Any,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    out_dir: Path,
    model_path: Path,
    ebm_dir: Path | None = None,
    premises: Any = None,
) -> StageResult:
    """Search the selected theorems (and, at iteration 0, again at the noise
    temperature for diverse data). With an EBM in ``ebm_dir`` (none at
    iteration 0) its energy joins the priority (``search.beta``) and the
    EBM temperature applies (``search.ebm_temperature``); the
    candidates stay ``search.collect_candidates``."""
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.search.engine import resolve_sampling
    from burnqed_core.search.job import SearchInterrupted, load_scorer, search_theorems
    from burnqed_core.search.trajectories import timeout_note, trajectory_stats

    scorer = load_scorer(ebm_dir, policy) if ebm_dir is not None and has_ebm(ebm_dir) else None
    runs = [("search", None)]
    if iteration == 0 and settings.search.noisy_pass:
        runs.append(("noisy", settings.search.noise_temperature))
    lines, metrics = [], {}
    for name, temperature in runs:
        sampling = resolve_sampling(settings.search, ebm=scorer is not None, temperature=temperature,
                                    num_candidates=settings.search.collect_candidates,
                                    max_new_tokens=settings.policy.max_new_tokens)
        out = out_dir / f"{name}.traj"
        report, _ = await search_theorems(_collection_settings(settings), policy, env, theorems, out,
                                          sampling=sampling, model_path=model_path, theorems_source="selection",
                                          iteration=iteration, scorer=scorer,
                                          ebm=ebm_dir if scorer is not None else None, premises=premises)
        if report.interrupted:
            # a partial search must not pass for the stage's output: the step fails, and the next run of
            # the stage resumes `out` where it stopped
            raise SearchInterrupted(f"interrupted by {report.signal}: {report.done} of {report.total} theorems "
                                    f"saved in {out}; run the stage again to continue")
        st = trajectory_stats(out)
        metrics[name] = st.model_dump(mode="json")
        lines.append(f"{name} (T={sampling.temperature}{', EBM' if scorer is not None else ''}): proved "
                     f"{st.proved}/{st.theorems}, {st.nodes} nodes, "
                     f"{st.positive} positive / {st.negative} negative labels, "
                     f"{st.candidates_avg or 0:.1f} unique candidates per expansion"
                     + (f" ({st.automation_tried} automation candidates tried, {st.proved_with_automation} proofs "
                        f"use one)" if st.automation_tried else "")
                     + (f"; {st.checks / max(st.theorems, 1):.0f} Lean checks per theorem, proofs with a policy step "
                        f"{st.proved_with_policy}, with a premise step {st.proved_with_premise}" if st.checks else "")
                     + (f"; {timeout_note(st)}" if st.timeouts else ""))
    return StageResult(stage="trajectories", iteration=iteration, path=str(out_dir), summary="; ".join(lines),
                       metrics=metrics)


def trajectory_outputs(stage_dir: Path) -> list[Path]:
    return sorted(p for p in stage_dir.glob("*.traj") if p.is_dir())


def merge_trajectories(iteration: int, shard_dirs: Sequence[Path], out_dir: Path) -> StageResult:
    """The iteration's trajectory outputs (``search.traj``, at iteration 0 ``noisy.traj``) from its finished
    shards (each the output of `trajectories` on its theorems): every shard's parts, in shard order, become
    the parts of one output (hard links: no copy), written aside and renamed; a theorem in two shards is an
    error."""
    from burnqed_core.search.merge import merge_search_outputs
    from burnqed_core.search.trajectories import timeout_note, trajectory_stats

    names = sorted({p.name for d in shard_dirs for p in trajectory_outputs(d)})
    lines, metrics = [], {}
    for name in names:
        out = merge_search_outputs([d / name for d in shard_dirs], out_dir / name)
        st = trajectory_stats(out)
        metrics[name.removesuffix(".traj")] = st.model_dump(mode="json")
        lines.append(f"{name.removesuffix('.traj')}: proved {st.proved}/{st.theorems}, {st.nodes} nodes, "
                     f"{st.positive} positive / {st.negative} negative labels, "
                     f"{st.candidates_avg or 0:.1f} unique candidates per expansion"
                     + (f"; {st.checks / max(st.theorems, 1):.0f} Lean checks per theorem, proofs with a policy "
                        f"step {st.proved_with_policy}, with a premise step {st.proved_with_premise}"
                        if st.checks else "")
                     + (f"; {timeout_note(st)}" if st.timeouts else ""))
    metrics["shards"] = len(shard_dirs)
    return StageResult(stage="trajectories", iteration=iteration, path=str(out_dir),
                       summary="; ".join(lines) + f" ({len(shard_dirs)} shard(s))", metrics=metrics)


def _select(ctx: StageContext[Settings]) -> Sequence[Theorem]:
    withheld = corpus.search_withheld(ctx.settings, ctx.input("base_model"))
    sel = search_selection(ctx.settings, ctx.iteration, trajectory_dirs(ctx.earlier_outputs()), withheld)
    log.info("trajectories[%d]: selected %d theorems (%s)", ctx.iteration, len(sel.theorems),
             sel.stats.model_dump())
    return sel.theorems


async def _shard(ctx: StageContext[Settings], theorems: Sequence[Theorem], work: Path) -> StageResult:
    from burnqed_core.search.job import rerank_premises

    merged = ctx.input("merged_model")
    pol, served = await ctx.policy_for(merged)
    index = None
    if ctx.settings.search.premises.enabled:
        from burnqed_core.premises.library import load_index

        d = ctx.settings.data
        held = corpus.held_out_families(d.benchmark, ctx.settings.eval.also, d.search_pool)
        index = load_index(ctx.input("premise_index")).without_families(held)
    index = rerank_premises(index, ctx.inputs.get("premise_reranker"), pol, merged)
    res = await trajectories(ctx.settings, ctx.iteration, pol, await ctx.env(), theorems, work, merged,
                             ebm_dir=ctx.inputs.get("ebm"), premises=index)
    return res.model_copy(update={"metrics": {**res.metrics, "served": served}})


def _merge(ctx: StageContext[Settings], shard_dirs: Sequence[Path]) -> StageResult:
    return merge_trajectories(ctx.iteration, shard_dirs, ctx.out)


TRAJECTORIES = StageSpec(
    name="trajectories", gpu=True, settings=Settings, earlier="trajectories",
    inputs=(Input("merged_model"), Input("premise_index"), Input("ebm", from_iteration=1),
            Input("premise_reranker", from_iteration=1), Input("base_model", edge=False)),
    shards=Sharded(select=_select, shard=_shard, merge=_merge, size=lambda p: p.pipeline.shard_size),
    doc="Every node of the searches (Parquet, resumable), on theorems not searched by iterations < N; iteration 0 "
        "searches a second time at the noise temperature; from iteration 1 the premise retrieval is re-ranked by "
        "premise_reranker[N] when it trained one. One step per shard of ``pipeline.shard_size`` theorems.",
)
