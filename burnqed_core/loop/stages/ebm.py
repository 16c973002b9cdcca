"""Iteration N's energy head, trained on its embeddings."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.errors import DataError
from burnqed_core.loop.inputs import trajectory_dirs
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import known_proof_states
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


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


def _ebm(ctx: StageContext) -> StageResult:
    return ebm(ctx.settings, ctx.iteration, ctx.input("embeddings"), trajectory_dirs(ctx.earlier), ctx.out,
                      known=known_proof_states(ctx))


EBM = StageSpec(
    name="ebm", out="ebm", gpu=True, kinds=frozenset({"pytorch"}),
    doc="Energy-head weights, config and metrics (energy gap, rank-1 accuracy, embedding separation); iteration 0 "
        "has no EBM. With ``ebm.hindsight`` the searches that proved nothing add their known proofs' states as "
        "positives.",
    inputs=(Input("embeddings"), Input("base_tactic_pairs", edge=False), Input("base_model", edge=False)),
    earlier="trajectories", settings=("ebm",), run=_ebm,
)
