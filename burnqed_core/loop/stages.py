"""One function per stage of an expert iteration (DESIGN.md, "The loop").

Each stage reads its inputs from explicit paths, writes into its own
directory and returns a small `StageResult`. The Dagster assets of
`burnqed_pipeline` are the one orchestration: they resolve the inputs
(`burnqed_core.loop.inputs`), call these functions under a fingerprinted
marker (`burnqed_core.loop.markers`: unchanged inputs are skipped, changed
ones recomputed) and show the result in the UI. Inside a stage, long work
resumes: training from its last checkpoint, search from its flushed parts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from burnqed_core.config import Profile
from burnqed_core.errors import DataError
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.corpus import (
    BASE_MODEL_FILE,
    PAIRS_FILE,
    SPLIT_FILE,
    base_pairs,
    base_split,
    benchmark_slug,
    corpus_theorems,
    frame_pairs,
    leandojo_corpus,
)
from burnqed_core.record_io import atomic_write_text, write_parquet
from burnqed_core.records import StageResult, TacticPair, Theorem, TrajectoryRecord

if TYPE_CHECKING:
    from burnqed_core.data.pairs import TheoremSplit

log = logging.getLogger(__name__)


# -- base corpus -------------------------------------------------------------------


async def trace_base(profile: Profile, env: ProofEnv, out_dir: Path) -> StageResult:
    """Replay the known proofs of the training corpus into tactic pairs."""
    from burnqed_core.lean.trace_cache import CACHE_DIR, TraceCache
    from burnqed_core.lean.tracing import trace_theorems
    from burnqed_core.search.job import lean_version

    theorems = [t for t in corpus_theorems(profile) if t.proof]
    where = profile.paths.trace_cache or Path(profile.paths.home) / CACHE_DIR
    cache = TraceCache(Path(where), lean_version(profile, env), profile.lean.model_dump(mode="json"))
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
        raise DataError(f"tracing {profile.data.corpus} gave no tactic pairs")
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


def pretrain(profile: Profile, pairs: Sequence[TacticPair], out_dir: Path,
             split: TheoremSplit | None = None) -> StageResult:
    """Pre-train the tiny base on the training side of ``split`` (default: `base_split` of ``pairs``), with the
    validation side as its eval set: validation theorems are never seen by the base (issue 21)."""
    from burnqed_core.data.pairs import prepare_pairs
    from burnqed_core.training.tiny_model import pretrain_base

    d = profile.data
    split = split or base_split(profile, pairs)
    prepared = prepare_pairs(split.trainable(pairs), d.val_fraction, d.seed, d.max_tokens, val_theorems=split.val,
                             alpha_copies=d.alpha_copies)
    train, val = frame_pairs(prepared.train), frame_pairs(prepared.val)
    m = pretrain_base(train, profile.training, out_dir, val=val, progress=True)
    summary = _train_summary("pre-trained tiny base", m) + (f"; on {prepared.stats.train_pairs} pairs of "
                                                            f"{prepared.stats.train_theorems} theorems, "
                                                            f"{prepared.stats.val_theorems} held out")
    if split.withheld:
        summary += f", {len(split.withheld)} withheld (search-only exercises)"
    return StageResult(stage="base_model", path=str(out_dir), summary=summary,
                       metrics=_train_metrics(m) | {"train_theorems": prepared.stats.train_theorems,
                                                    "val_theorems": prepared.stats.val_theorems})




async def base_tactic_pairs(profile: Profile, env: Callable[[], Awaitable[ProofEnv]], out_dir: Path) -> StageResult:
    """The base corpus as tactic pairs (``pairs.parquet``), from the first source that applies:
    ``data.trace_repo`` traced by LeanDojo; ``data.corpus`` given as LeanDojo Benchmark 4 files (train and val
    splits); else the corpus's known proofs replayed in Lean (`trace_base`, the tiny profile)."""
    from burnqed_core.data.external import read_leandojo
    from burnqed_core.data.lean_dojo_trace import trace_repo

    d = profile.data
    if d.trace_repo and d.trace_commit:
        data = trace_repo(d.trace_repo, d.trace_commit, out_dir)
        where = f"LeanDojo trace of {d.trace_repo}@{d.trace_commit}"
    elif (files := leandojo_corpus(d.corpus)) is not None:
        pairs: list[TacticPair] = []
        for f in files:
            pairs.extend(read_leandojo(f).pairs)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_parquet(pairs, out_dir / PAIRS_FILE, TacticPair)
        return StageResult(stage="base_tactic_pairs", path=str(out_dir),
                           summary=f"{len(pairs)} tactic pairs from LeanDojo files {', '.join(f.name for f in files)}",
                           metrics={"pairs": len(pairs), "source": "leandojo", "files": [str(f) for f in files]})
    else:
        res = await trace_base(profile, await env(), out_dir)
        return res.model_copy(update={"stage": "base_tactic_pairs", "metrics": {**res.metrics, "source": "trace"}})
    if not data.pairs:
        raise DataError(f"{where} gave no tactic pairs")
    write_parquet(data.pairs, out_dir / PAIRS_FILE, TacticPair)
    return StageResult(stage="base_tactic_pairs", path=str(out_dir),
                       summary=f"{len(data.pairs)} tactic pairs of {len(data.theorems)} theorems from the {where}",
                       metrics={"pairs": len(data.pairs), "theorems": len(data.theorems), "source": "lean_dojo"})


def base_model(profile: Profile, pairs_dir: Path, out_dir: Path) -> StageResult:
    """Draw the theorem split of the base pairs once (``split.json`` in ``out_dir``, `base_split`); then, with
    ``training.base_model: tiny``, pre-train the tiny model on its training side into ``out_dir``; else name the
    profile's Hugging Face model (a hub name or a local dir, loaded by the training stage) in ``base_model.json``."""
    from burnqed_core.data.pairs import write_split

    name = profile.training.base_model
    pairs = base_pairs(pairs_dir)
    split = base_split(profile, pairs)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_split(split, out_dir / SPLIT_FILE)
    if name == "tiny":
        return pretrain(profile, pairs, out_dir, split)
    atomic_write_text(out_dir / BASE_MODEL_FILE, json.dumps({"model": name}))
    return StageResult(stage="base_model", path=str(out_dir), summary=f"base model {name} (trained elsewhere)",
                       metrics={"model": name, "train_theorems": len(split.train), "val_theorems": len(split.val)})


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


# -- one iteration -----------------------------------------------------------------


def tactic_pairs(
    profile: Profile,
    iteration: int,
    base: Sequence[TacticPair],
    trajectory_dirs: Sequence[Path],
    out_dir: Path,
    tokenizer_dir: Path | None = None,
    split: TheoremSplit | None = None,
) -> StageResult:
    """Iteration 0: the prepared base pairs. N > 0: base subsample + positive
    trajectory steps of earlier iterations, upsampled (seed 000) up to
    ``data.trajectory_max_share`` of the mix. Train and validation follow
    ``split``, the split `base_model` drew before pre-training (default: the
    same `base_split` drawn here)."""
    from burnqed_core.data.mixing import mix_iteration, positive_steps
    from burnqed_core.data.pairs import hf_token_counter, prepare_pairs, write_prepared
    from burnqed_core.trajectory_io import read_trajectories

    d = profile.data
    counter = hf_token_counter(tokenizer_dir) if tokenizer_dir else None
    split = split or base_split(profile, base)
    prepared = prepare_pairs(split.trainable(base), d.val_fraction, d.seed, d.max_tokens, counter,
                             val_theorems=split.val, alpha_copies=d.alpha_copies)
    extra: dict[str, Any] = {"iteration": iteration, "trajectories": [str(p) for p in trajectory_dirs],
                             "split": {"seed": split.seed, "val_fraction": split.val_fraction,
                                       "train_theorems": len(split.train), "val_theorems": len(split.val),
                                       "withheld_theorems": len(split.withheld)}}
    if iteration > 0:
        records: list[TrajectoryRecord] = []
        for p in trajectory_dirs:
            records.extend(read_trajectories(p))
        exclude = ("automation",) if d.automation_steps == "exclude" else ()
        steps = positive_steps(records, source="trajectory", exclude_sources=exclude)
        extra["automation_steps"] = {"policy": d.automation_steps, "excluded": sum(
            r.label == "positive" and r.source in exclude for r in records)}
        mix = mix_iteration(prepared, steps, d.base_subsample, d.trajectory_upsample, d.seed + iteration,
                            max_share=d.trajectory_max_share, split=split)
        prepared = prepared.model_copy(update={"train": mix.train, "val": mix.val})
        extra["mix"] = mix.stats.model_dump(mode="json")
    write_prepared(prepared, out_dir, extra)
    s = prepared.stats
    summary = (f"{prepared.train.height} train / {prepared.val.height} val pairs "
               f"({s.train_theorems} / {s.val_theorems} theorems, split by name before pre-training"
               + (f"; {len(split.withheld)} withheld" if split.withheld else "") + ")")
    if iteration > 0:
        ms = extra["mix"]
        summary += (f"; mix: {json.dumps({k: v for k, v in ms.items() if type(v) is int})}, "
                    f"trajectory share {ms['trajectory_fraction']:.1%} (cap {ms['trajectory_max_share']:.0%}), "
                    f"upsample x{ms['effective_upsample']:.2f}")
        if extra["automation_steps"]["excluded"]:
            summary += f"; {extra['automation_steps']['excluded']} automation-only proof steps left out"
    return StageResult(stage="tactic_pairs", iteration=iteration, path=str(out_dir), summary=summary,
                       metrics={"train_pairs": prepared.train.height, "val_pairs": prepared.val.height})


def lora_adapter(profile: Profile, iteration: int, pairs_dir: Path, base_model: Path,
                 warm_from: Path | None, out_dir: Path, trajectory_dirs: Sequence[Path] = ()) -> StageResult:
    """LoRA SFT; with ``ebm.joint.enabled`` at iteration N > 0 (given the
    trajectories of iterations < N), the adapter and the energy head are
    trained together (`training.joint`; the `ebm` stage then adopts the head)."""
    from burnqed_core.training.sft import load_pairs_dir, train_sft

    train, val, fingerprints = load_pairs_dir(pairs_dir)
    if profile.ebm.joint.enabled and iteration > 0 and trajectory_dirs:
        from burnqed_core.ebm.run import read_trajectory_dirs
        from burnqed_core.training.joint import train_joint

        rep = train_joint(train, val, read_trajectory_dirs(trajectory_dirs), profile.training, profile.ebm, out_dir,
                          base_model, iteration=iteration, warm_from=warm_from, progress=True)
        return StageResult(stage="lora_adapter", iteration=iteration, path=str(out_dir), summary=rep.summary(),
                           metrics=rep.model_dump(mode="json") | {"joint": True})
    m = train_sft(train, val, profile.training, out_dir, base_model, iteration=iteration, warm_from=warm_from,
                  data_fingerprints=fingerprints, progress=True)
    return StageResult(stage="lora_adapter", iteration=iteration, path=str(out_dir),
                       summary=_train_summary(f"LoRA{' (QLoRA)' if profile.training.qlora else ''} SFT", m),
                       metrics=_train_metrics(m))


def merged_model(profile: Profile, iteration: int, adapter_dir: Path, out_dir: Path) -> StageResult:
    from burnqed_core.training.merge import merge_adapter

    r = merge_adapter(adapter_dir, out_dir, shard_size=profile.training.shard_size)
    return StageResult(stage="merged_model", iteration=iteration, path=str(out_dir), summary=r.summary(),
                       metrics=r.model_dump(mode="json"))


async def embeddings(
    profile: Profile,
    iteration: int,
    policy: Any,
    trajectory_dirs: Sequence[Path],
    out_dir: Path,
    model_path: Path | None = None,
    progress: bool = True,
    known: Mapping[str, Sequence[str]] | None = None,
) -> StageResult:
    """Encode every unique proof state and root goal of the trajectories of
    iterations < N with this iteration's model into a resumable Parquet cache
    (``out_dir/cache``), and measure the encoder's separation of positive and
    negative states (seed 002's collapse check). Iteration 0 has no
    trajectories: nothing is encoded. ``known``: the known proofs' states
    (``ebm.hindsight``, `burnqed_core.ebm.hindsight`), encoded for the searched
    theorems too."""
    from burnqed_core.ebm.data import build_data
    from burnqed_core.ebm.embeddings import EmbeddingCache, cache_dir_for
    from burnqed_core.ebm.metrics import separation_metrics, separation_warnings
    from burnqed_core.ebm.run import encode_trajectories, read_trajectory_dirs

    if not trajectory_dirs:
        return StageResult(stage="embeddings", iteration=iteration, path=str(out_dir),
                           summary="no trajectories of earlier iterations: nothing to encode",
                           metrics={"states": 0, "encoded": 0})
    cache_dir = cache_dir_for(out_dir)
    rep = await encode_trajectories(policy, trajectory_dirs, cache_dir, profile.ebm, model_path=model_path,
                                    progress=progress, known=known)
    metrics: dict[str, Any] = rep.model_dump(mode="json") | {"states_per_s": round(rep.states_per_s, 2),
                                                              "trajectories": [str(p) for p in trajectory_dirs]}
    summary = (f"{rep.states} unique states and goals ({rep.encoded} encoded now, {rep.cached} cached), "
               f"{rep.dim}-d {rep.pooling}, {rep.states_per_s:.1f} states/s")
    data = build_data(read_trajectory_dirs(trajectory_dirs), known)
    if data.keys:
        sep = separation_metrics(EmbeddingCache.load(cache_dir).matrix(data.keys), data, profile.ebm.val_fraction,
                                 profile.ebm.seed)
        metrics["separation"] = sep.model_dump(mode="json")
        warnings = separation_warnings(sep)
        metrics["warnings"] = warnings
        if sep.centroid_l2 is not None:
            summary += (f"; separation: centroid L2 {sep.centroid_l2:.3f} (ratio {sep.centroid_l2_ratio or 0:.3f}), "
                        f"linear probe {sep.linear_probe_acc if sep.linear_probe_acc is not None else float('nan'):.3f}"
                        f" on {sep.positives} positive / {sep.negatives} negative states")
        for w in warnings:
            log.warning("embeddings: %s", w)
    return StageResult(stage="embeddings", iteration=iteration, path=str(out_dir), summary=summary, metrics=metrics)


def ebm(
    profile: Profile,
    iteration: int,
    embeddings_dir: Path,
    trajectory_dirs: Sequence[Path],
    out_dir: Path,
    progress: bool = True,
    adapter_dir: Path | None = None,
    model_path: Path | None = None,
    known: Mapping[str, Sequence[str]] | None = None,
) -> StageResult:
    """Train the energy head on the embeddings of the trajectories of
    iterations < N. Iteration 0 (no trajectories), ``ebm.enabled: false``, or
    trajectories without a single proof path: no EBM (nothing a scorer would
    load is written; the search then runs without one). With joint training
    (``ebm.joint.enabled``), the head trained with the adapter in
    ``adapter_dir`` is adopted as the EBM of the merged model ``model_path``.
    ``known``: the known proofs' states for hindsight positives (``ebm.hindsight``)."""
    from burnqed_core.ebm.embeddings import cache_dir_for
    from burnqed_core.ebm.run import train_from_dirs

    def none(why: str) -> StageResult:
        return StageResult(stage="ebm", iteration=iteration, path=str(out_dir), summary=f"no EBM: {why}",
                           metrics={"trained": False, "reason": why})

    if not profile.ebm.enabled:
        return none("ebm.enabled is false")
    if iteration == 0 or not trajectory_dirs:
        return none("iteration 0 has no trajectories to learn from")
    from burnqed_core.training.joint import attach_encoder, has_joint_head

    if profile.ebm.joint.enabled and has_joint_head(adapter_dir) and model_path is not None:
        from burnqed_core.ebm.run import measure

        assert adapter_dir is not None
        attach_encoder(adapter_dir, model_path, out_dir)
        m = measure(out_dir, cache_dir_for(embeddings_dir), trajectory_dirs, profile.ebm, known=known)
        return StageResult(stage="ebm", iteration=iteration, path=str(out_dir),
                           summary=f"jointly trained EBM adopted from {adapter_dir}; {m.summary()}",
                           metrics={"trained": True, "joint": True, "val": m.model_dump(mode="json")})
    try:
        rep = train_from_dirs(cache_dir_for(embeddings_dir), trajectory_dirs, profile.ebm, out_dir,
                              iteration=iteration, progress=progress, known=known)
    except DataError as e:
        log.warning("no EBM at iteration %d: %s", iteration, e)
        return none(str(e))
    metrics = rep.model_dump(mode="json", exclude={"loss_curve", "eval_curve"}) | {"trained": True}
    summary = rep.summary()
    if profile.ebm.hindsight and not rep.hindsight_positives:
        why = ("ebm.hindsight is on, but no training-side theorem that a search failed has a known proof here "
               "(searches that draw only withheld exercises leave none: data.search_exercises)")
        log.warning("ebm[%d]: %s", iteration, why)
        metrics["warnings"] = [why]
        summary += f"; {why}"
    return StageResult(stage="ebm", iteration=iteration, path=str(out_dir), summary=summary, metrics=metrics)


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


def _train_metrics(m: Any) -> dict[str, Any]:
    d = m.model_dump(mode="json")
    d.pop("loss_curve", None)
    return d


def _train_summary(what: str, m: Any) -> str:
    d = m.model_dump(mode="json")
    curve = d.get("loss_curve") or []
    first = curve[0]["loss"] if curve else None
    last = curve[-1]["loss"] if curve else None
    parts = [what]
    if first is not None:
        parts.append(f"loss {first:.3f} -> {last:.3f}")
    if d.get("best_eval_loss") is not None:
        parts.append(f"best eval loss {d['best_eval_loss']:.3f}")
    parts.append(f"{d['steps']} steps, {d['tokens_per_s']:.0f} tokens/s, {d['trainable_params']:,} trainable "
                 f"params, {d['wall_time_s']:.0f} s")
    return ", ".join(parts)
