"""``embeddings``: a resumable cache of iteration N's model's embeddings of the proof states of the trajectories
of every iteration < N (and, with ``ebm.hindsight``, of the known proofs' states), with the encoder's
separation of positive and negative states."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import EBMConfig, PolicyConfig
from burnqed_core.loop.inputs import trajectory_dirs
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import known_proof_states
from burnqed_core.projection import StageSettings
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


class Settings(StageSettings):
    """The EBM section (encoding batch, cache parts, the separation's split) and the policy that encodes."""

    ebm: EBMConfig
    policy: PolicyConfig


async def embeddings(
    settings: Settings,
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
    negative states (the ``no_collapse`` check's figures). Iteration 0 has no
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
    rep = await encode_trajectories(policy, trajectory_dirs, cache_dir, settings.ebm, model_path=model_path,
                                    progress=progress, known=known)
    metrics: dict[str, Any] = rep.model_dump(mode="json") | {"states_per_s": round(rep.states_per_s, 2),
                                                              "trajectories": [str(p) for p in trajectory_dirs]}
    summary = (f"{rep.states} unique states and goals ({rep.encoded} encoded now, {rep.cached} cached), "
               f"{rep.dim}-d {rep.pooling}, {rep.states_per_s:.1f} states/s")
    data = build_data(read_trajectory_dirs(trajectory_dirs), known)
    if data.keys:
        sep = separation_metrics(EmbeddingCache.load(cache_dir).matrix(data.keys), data, settings.ebm.val_fraction,
                                 settings.ebm.seed)
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


async def _run(ctx: StageContext[Settings]) -> StageResult:
    policy, _served = await ctx.policy_for(ctx.input("merged_model"))
    return await embeddings(ctx.settings, ctx.iteration, policy, trajectory_dirs(ctx.earlier_outputs()), ctx.out,
                            known=known_proof_states(ctx, ctx.settings.ebm.hindsight))


EMBEDDINGS = StageSpec(
    name="embeddings", gpu=True, settings=Settings, run=_run, earlier="trajectories",
    inputs=(Input("merged_model"), Input("base_tactic_pairs", edge=False), Input("base_model", edge=False)),
    doc="A resumable Parquet cache of (state, goal, vector) for the states of the trajectories of iterations "
        "< N (with ``ebm.hindsight``, and the known proofs' states of their searched training theorems), encoded "
        "by merged_model[N].",
)
