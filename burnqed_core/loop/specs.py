"""Every stage of the loop, declared once (`burnqed_core.loop.spec.StageSpec`), in the order they run.

To add a setting: add the field to `burnqed_core.config` and read it in the stage; if the stage's settings
below do not hold it yet, the stage fails in its tests with `UndeclaredSetting` until its path is added
here, and from then on changing it re-runs exactly the stages that hold it. To add a stage: write its
function (`burnqed_core.loop.stages`), add a spec here; the Dagster asset, its fingerprint, inputs checks,
metadata and its place in ``burnqed loop`` follow.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.loop import corpus, stages
from burnqed_core.loop.inputs import earlier_solved, eval_theorems, search_selection, trajectory_dirs
from burnqed_core.loop.spec import Input, Sharded, StageContext, StageSpec, topological
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)

# Which Lean decides, and how: the backend, the trusted checker, the tactic timeout, the modules imported.
LEAN = "lean"


def _corpus_file(profile: Profile) -> Mapping[str, Path | None]:
    from burnqed_core.data.theorems import resolve_spec

    d = profile.data
    return {"corpus": None if d.trace_repo else resolve_spec(d.corpus)}


def _searched_files(profile: Profile) -> Mapping[str, Path | None]:
    """The corpus, and the theorem set searched instead of it (``data.search_pool``) when set."""
    from burnqed_core.data.theorems import resolve_spec

    pool = profile.data.search_pool
    return {**_corpus_file(profile), "search_pool": resolve_spec(pool) if pool else None}


def _benchmark_files(profile: Profile) -> Mapping[str, Path | None]:
    from burnqed_core.data.theorems import AUTOMATION_FILE, resolve_spec

    bench = resolve_spec(profile.data.benchmark)
    return {"benchmark": bench, "automation_file": (bench if bench.is_dir() else bench.parent) / AUTOMATION_FILE}


# -- the shared base ---------------------------------------------------------------


async def _base_tactic_pairs(ctx: StageContext) -> StageResult:
    return await stages.base_tactic_pairs(ctx.settings, ctx.env, ctx.out)


BASE_TACTIC_PAIRS = StageSpec(
    name="base_tactic_pairs", out="traced", partitioned=False, kinds=frozenset({"parquet"}),
    doc="(state, tactic) pairs of the base corpus: its proofs replayed in Lean (tiny), LeanDojo Benchmark 4 "
        "files, or a repository traced by LeanDojo (prod).",
    settings=("data.corpus", "data.exclude_families", "data.trace_repo", "data.trace_commit", LEAN),
    files=_corpus_file, run=_base_tactic_pairs,
)


def _base_model(ctx: StageContext) -> StageResult:
    return stages.base_model(ctx.settings, ctx.input("base_tactic_pairs"), ctx.out)


BASE_MODEL = StageSpec(
    name="base_model", out="model", partitioned=False, kinds=frozenset({"pytorch"}),
    doc="The tiny model pre-trained here on the training side of the base pairs' theorem split (drawn here "
        "once, ``split.json``: its validation theorems are never trained on, and every iteration's pairs reuse "
        "it), or the profile's Hugging Face model (``training.base_model``) in prod.",
    inputs=(Input("base_tactic_pairs"),),
    settings=("training.base_model", "training.tiny_model", "training.local_names", "training.numerals",
              "training.seed", "training.warmup_steps", "training.lr_schedule", "training.min_lr_ratio",
              "training.max_seq_len", "training.max_grad_norm", "training.eval_every",
              "data.corpus", "data.exclude_families", "data.withhold_fraction", "data.withhold_families",
              "data.val_fraction", "data.max_tokens", "data.seed", "data.alpha_copies"),
    run=_base_model, progress="training", extras=("loss_curve", "model_fingerprint"), label="pre-training",
)


async def _automation_baselines(ctx: StageContext) -> StageResult:
    return await stages.automation_baselines(ctx.settings, ctx.env, ctx.out)


AUTOMATION_BASELINES = StageSpec(
    name="automation_baselines", out="baselines", partitioned=False, kinds=frozenset({"json"}),
    doc="Which single automation tactic closes each benchmark theorem (null: automation-resistant, \"hard\"); "
        "every solve rate is reported beside it. Read from the benchmark's automation.json where complete, else "
        "measured in Lean.",
    settings=("data.benchmark", LEAN), files=_benchmark_files, run=_automation_baselines,
)


# -- one iteration -----------------------------------------------------------------


def _tactic_pairs(ctx: StageContext) -> StageResult:
    model = ctx.input("base_model")
    return stages.tactic_pairs(ctx.settings, ctx.iteration, corpus.base_pairs(ctx.input("base_tactic_pairs")),
                               trajectory_dirs(ctx.earlier), ctx.out, Path(corpus.base_model_path(model)),
                               split=corpus.read_base_split(model))


TACTIC_PAIRS = StageSpec(
    name="tactic_pairs", out="pairs", kinds=frozenset({"parquet"}),
    doc="Train/val pairs split by theorem (the split ``base_model`` drew before pre-training): the base pairs at "
        "iteration 0; from N > 0 a base subsample mixed with the upsampled positive steps of the trajectories of "
        "every iteration < N (read from the run directory), at most ``data.trajectory_max_share`` of the mix. "
        "Under a backfill it first waits for runs still materialising earlier iterations.",
    inputs=(Input("base_tactic_pairs"), Input("base_model")), earlier="trajectories",
    settings=("data.val_fraction", "data.max_tokens", "data.base_subsample", "data.trajectory_upsample",
              "data.trajectory_max_share", "data.seed", "data.automation_steps", "data.alpha_copies"),
    run=_tactic_pairs,
)


def _warm_start(profile: Profile) -> str:
    return "lora_adapter" if profile.training.warm_start == "adapter" else "merged_model"


def _lora_settings(profile: Profile) -> tuple[str, ...]:
    # joint training reads the whole EBM section; separate training only whether joint is on
    return ("training", "ebm" if profile.ebm.joint.enabled else "ebm.joint.enabled")


def _lora_adapter(ctx: StageContext) -> StageResult:
    base = Path(corpus.base_model_path(ctx.input("base_model")))
    return stages.lora_adapter(ctx.settings, ctx.iteration, ctx.input("tactic_pairs"), base, ctx.previous, ctx.out)


LORA_ADAPTER = StageSpec(
    name="lora_adapter", out="adapter", gpu=True, kinds=frozenset({"pytorch"}),
    doc="SFT of a LoRA adapter on tactic_pairs[N] over the base model, warm-started from iteration N-1's adapter "
        "(or merged model: ``training.warm_start``); resumes from its last checkpoint.",
    inputs=(Input("tactic_pairs"), Input("base_model")), previous=_warm_start, settings=_lora_settings,
    run=_lora_adapter, progress="training", extras=("loss_curve",), label="LoRA",
)


def _merged_model(ctx: StageContext) -> StageResult:
    return stages.merged_model(ctx.settings, ctx.iteration, ctx.input("lora_adapter"), ctx.out)


MERGED_MODEL = StageSpec(
    name="merged_model", out="merged", gpu=True, kinds=frozenset({"safetensors"}),
    doc="lora_adapter[N] merged into the base weights (safetensors + tokenizer), checked against the adapter.",
    inputs=(Input("lora_adapter"),), settings=("training.shard_size",), run=_merged_model,
    extras=("model_fingerprint",),
)


async def _policy(ctx: StageContext) -> object:
    assert ctx.policy is not None, f"{ctx.spec.name} needs a policy"
    pol, _served = await ctx.policy(ctx.input("merged_model"), ctx.iteration)
    return pol


def _known_paths(ctx: StageContext) -> dict[str, list[str]] | None:
    """With ``ebm.hindsight``: the known proofs' states of the training side of the base split (never an
    exercise's or a validation theorem's)."""
    if not ctx.settings.ebm.hindsight:
        return None
    from burnqed_core.ebm.hindsight import known_paths

    split = corpus.read_base_split(ctx.input("base_model"))
    return known_paths(corpus.base_pairs(ctx.input("base_tactic_pairs")), frozenset(split.train))


async def _embeddings(ctx: StageContext) -> StageResult:
    return await stages.embeddings(ctx.settings, ctx.iteration, await _policy(ctx), trajectory_dirs(ctx.earlier),
                                   ctx.out, known=_known_paths(ctx))


EMBEDDINGS = StageSpec(
    name="embeddings", out="embeddings", gpu=True, kinds=frozenset({"parquet"}),
    doc="A resumable Parquet cache of (state, goal, vector) for the states of the trajectories of iterations "
        "< N (with ``ebm.hindsight``, and the known proofs' states of their searched training theorems), encoded "
        "by merged_model[N].",
    inputs=(Input("merged_model"), Input("base_tactic_pairs", edge=False), Input("base_model", edge=False)),
    earlier="trajectories", settings=("ebm", "policy"), run=_embeddings,
)


def _ebm(ctx: StageContext) -> StageResult:
    return stages.ebm(ctx.settings, ctx.iteration, ctx.input("embeddings"), trajectory_dirs(ctx.earlier), ctx.out,
                      known=_known_paths(ctx))


EBM = StageSpec(
    name="ebm", out="ebm", gpu=True, kinds=frozenset({"pytorch"}),
    doc="Energy-head weights, config and metrics (energy gap, rank-1 accuracy, embedding separation); iteration 0 "
        "has no EBM. With ``ebm.hindsight`` the searches that proved nothing add their known proofs' states as "
        "positives.",
    inputs=(Input("embeddings"), Input("base_tactic_pairs", edge=False), Input("base_model", edge=False)),
    earlier="trajectories", settings=("ebm",), run=_ebm,
)


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
    res = await stages.trajectories(ctx.settings, ctx.iteration, pol, await ctx.env(), theorems, work, merged,
                                    ebm_dir=ctx.inputs.get("ebm"))
    return res.model_copy(update={"metrics": {**res.metrics, "served": served}})


def _merge_trajectories(ctx: StageContext, shard_dirs: Sequence[Path]) -> StageResult:
    return stages.merge_trajectories(ctx.settings, ctx.iteration, shard_dirs, ctx.out)


TRAJECTORIES = StageSpec(
    name="trajectories", out="trajectories", gpu=True, kinds=frozenset({"parquet"}),
    doc="Every node of the searches (Parquet, resumable), on theorems not searched by iterations < N; iteration 0 "
        "searches a second time at the noise temperature. One step per shard of ``pipeline.shard_size`` "
        "theorems.",
    inputs=(Input("merged_model"), Input("ebm", from_iteration=1), Input("base_model", edge=False)),
    earlier="trajectories", files=_searched_files,
    settings=("search", "policy", LEAN, "data.corpus", "data.exclude_families", "data.benchmark",
              "data.search_theorems", "data.search_exercises", "data.seed", "data.search_failed_family_boost",
              "data.search_retry_failed", "data.search_pool", "data.search_retry_max", "eval.also",
              "data.withhold_fraction", "data.withhold_families"),
    shards=Sharded(select=_select_trajectories, shard=_search_shard, merge=_merge_trajectories,
                   size=lambda p: p.pipeline.shard_size),
    extras=("served",),
)


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

SPECS: tuple[StageSpec, ...] = tuple(topological([
    BASE_TACTIC_PAIRS, BASE_MODEL, AUTOMATION_BASELINES, TACTIC_PAIRS, LORA_ADAPTER, MERGED_MODEL, EMBEDDINGS, EBM,
    TRAJECTORIES, EVAL_REPORT,
]))
BY_NAME: dict[str, StageSpec] = {s.name: s for s in SPECS}
