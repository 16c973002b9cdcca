"""Iteration N's searches of corpus theorems, over shards."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop import corpus
from burnqed_core.loop.inputs import search_selection, trajectory_dirs
from burnqed_core.loop.spec import Input, Sharded, StageContext, StageSpec
from burnqed_core.loop.stages.shared import LEAN, corpus_file
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)


def _collection_profile(profile: Profile) -> Profile:
    """The profile the trajectories search with: baseline (b)'s tactics are not tried at the root
    (``search.automation.baseline_at_root`` is for the eval), so that a corpus theorem that
    ``induction x <;> simp_all [f]`` closes is proved through the policy's own ``induction x``, a step the
    next iteration trains on, rather than by one automation call that the mix leaves out."""
    auto = profile.search.automation
    if not auto.baseline_at_root:
        return profile
    search = profile.search.model_copy(update={"automation": auto.model_copy(update={"baseline_at_root": False})})
    return profile.model_copy(update={"search": search})


async def trajectories(
    profile: Profile,
    iteration: int,
    policy: Any,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    out_dir: Path,
    model_path: Path,
    ebm_dir: Path | None = None,
) -> StageResult:
    """Search the selected theorems (and, at iteration 0, again at the noise
    temperature for diverse data). With an EBM in ``ebm_dir`` (none at
    iteration 0) its energy joins the priority (``search.beta``) and the
    EBM temperature applies (``search.ebm_temperature``, seed 000: 1.0); the
    candidates stay ``search.collect_candidates``."""
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.search.engine import resolve_sampling
    from burnqed_core.search.job import SearchInterrupted, load_scorer, search_theorems
    from burnqed_core.search.trajectories import timeout_note, trajectory_stats

    scorer = load_scorer(ebm_dir, policy) if ebm_dir is not None and has_ebm(ebm_dir) else None
    runs = [("search", None)]
    if iteration == 0 and profile.search.noisy_pass:
        runs.append(("noisy", profile.search.noise_temperature))
    lines, metrics = [], {}
    for name, temperature in runs:
        sampling = resolve_sampling(profile.search, ebm=scorer is not None, temperature=temperature,
                                    num_candidates=profile.search.collect_candidates,
                                    max_new_tokens=profile.policy.max_new_tokens)
        out = out_dir / f"{name}.traj"
        report, _ = await search_theorems(_collection_profile(profile), policy, env, theorems, out,
                                          sampling=sampling, model_path=model_path, theorems_source="selection",
                                          iteration=iteration, scorer=scorer,
                                          ebm=ebm_dir if scorer is not None else None)
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
                     + (f"; {timeout_note(st)}" if st.timeouts else ""))
    return StageResult(stage="trajectories", iteration=iteration, path=str(out_dir), summary="; ".join(lines),
                       metrics=metrics)


def trajectory_outputs(stage_dir: Path) -> list[Path]:
    return sorted(p for p in stage_dir.glob("*.traj") if p.is_dir())


def merge_trajectories(profile: Profile, iteration: int, shard_dirs: Sequence[Path], out_dir: Path) -> StageResult:
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
                     + (f"; {timeout_note(st)}" if st.timeouts else ""))
    metrics["shards"] = len(shard_dirs)
    return StageResult(stage="trajectories", iteration=iteration, path=str(out_dir),
                       summary="; ".join(lines) + f" ({len(shard_dirs)} shard(s))", metrics=metrics)


def _select_trajectories(ctx: StageContext) -> Sequence[Theorem]:
    withheld = corpus.search_withheld(ctx.settings, ctx.input("base_model"))
    sel = search_selection(ctx.settings, ctx.iteration, trajectory_dirs(ctx.earlier), withheld)
    log.info("trajectories[%d]: selected %d theorems (%s)", ctx.iteration, len(sel.theorems),
             sel.stats.model_dump())
    return sel.theorems


async def _search_shard(ctx: StageContext, theorems: Sequence[Theorem], work: Path) -> StageResult:
    assert ctx.policy is not None
    merged = ctx.input("merged_model")
    pol, served = await ctx.policy(merged, ctx.iteration)
    res = await trajectories(ctx.settings, ctx.iteration, pol, await ctx.env(), theorems, work, merged,
                                    ebm_dir=ctx.inputs.get("ebm"))
    return res.model_copy(update={"metrics": {**res.metrics, "served": served}})


def _merge_trajectories(ctx: StageContext, shard_dirs: Sequence[Path]) -> StageResult:
    return merge_trajectories(ctx.settings, ctx.iteration, shard_dirs, ctx.out)


TRAJECTORIES = StageSpec(
    name="trajectories", out="trajectories", gpu=True, kinds=frozenset({"parquet"}),
    doc="Every node of the searches (Parquet, resumable), on theorems not searched by iterations < N; iteration 0 "
        "searches a second time at the noise temperature. One step per shard of ``pipeline.shard_size`` "
        "theorems.",
    inputs=(Input("merged_model"), Input("ebm", from_iteration=1), Input("base_model", edge=False)),
    earlier="trajectories", files=corpus_file,
    settings=("search", "policy", LEAN, "data.corpus", "data.exclude_families", "data.benchmark",
              "data.search_theorems", "data.search_exercises", "data.seed", "data.search_failed_family_boost",
              "data.search_retry_failed",
              "data.withhold_fraction", "data.withhold_families"),
    shards=Sharded(select=_select_trajectories, shard=_search_shard, merge=_merge_trajectories,
                   size=lambda p: p.pipeline.shard_size),
    extras=("served",),
)
