"""``ebm``: iteration N's energy head, trained on its embeddings of the trajectories of every iteration < N
(none at iteration 0)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from burnqed_core.config import EBMConfig
from burnqed_core.errors import DataError
from burnqed_core.loop.inputs import trajectory_dirs
from burnqed_core.loop.spec import Input, StageContext, StageSpec
from burnqed_core.loop.stages.shared import known_proof_states
from burnqed_core.projection import StageSettings
from burnqed_core.records import StageResult

log = logging.getLogger(__name__)


class Settings(StageSettings):
    ebm: EBMConfig


def ebm(
    settings: Settings,
    iteration: int,
    embeddings_dir: Path,
    trajectory_dirs: Sequence[Path],
    out_dir: Path,
    progress: bool = True,
    known: Mapping[str, Sequence[str]] | None = None,
    adapter_dir: Path | None = None,
) -> StageResult:
    """Train the energy head on the embeddings of the trajectories of
    iterations < N. Iteration 0 (no trajectories), ``ebm.enabled: false``, or
    trajectories without a single proof path: no EBM (nothing a scorer would
    load is written; the search then runs without one). ``known``: the known
    proofs' states for hindsight positives (``ebm.hindsight``). With ``ebm.joint``
    and a head trained with the adapter in ``adapter_dir``: that head, measured on
    these embeddings and recorded as trained jointly (and as aborted, if its run was)."""
    from burnqed_core.ebm.embeddings import cache_dir_for
    from burnqed_core.ebm.run import train_from_dirs
    from burnqed_core.training.joint_head import adopt_joint_head, has_joint_head

    def none(why: str) -> StageResult:
        return StageResult(stage="ebm", iteration=iteration, path=str(out_dir), summary=f"no EBM: {why}",
                           metrics={"trained": False, "reason": why})

    if not settings.ebm.enabled:
        return none("ebm.enabled is false")
    if iteration == 0 or not trajectory_dirs:
        return none("iteration 0 has no trajectories to learn from")
    try:
        if settings.ebm.joint and adapter_dir is not None and has_joint_head(adapter_dir):
            rep = adopt_joint_head(adapter_dir, cache_dir_for(embeddings_dir), trajectory_dirs, settings.ebm,
                                   out_dir, iteration=iteration)
        else:
            rep = train_from_dirs(cache_dir_for(embeddings_dir), trajectory_dirs, settings.ebm, out_dir,
                                  iteration=iteration, progress=progress, known=known)
    except DataError as e:
        log.warning("no EBM at iteration %d: %s", iteration, e)
        return none(str(e))
    metrics = rep.model_dump(mode="json", exclude={"loss_curve", "eval_curve"}) | {"trained": True}
    if settings.ebm.joint and not rep.trained_jointly:
        metrics["joint_reason"] = "lora_adapter trained no head (see its joint_reason): trained apart"
    summary = rep.summary()
    if settings.ebm.hindsight and not rep.hindsight_positives:
        why = ("ebm.hindsight is on, but no training-side theorem that a search failed has a known proof here "
               "(searches that draw only withheld exercises leave none: data.search_exercises)")
        log.warning("ebm[%d]: %s", iteration, why)
        metrics["warnings"] = [why]
        summary += f"; {why}"
    return StageResult(stage="ebm", iteration=iteration, path=str(out_dir), summary=summary, metrics=metrics)


def _run(ctx: StageContext[Settings]) -> StageResult:
    return ebm(ctx.settings, ctx.iteration, ctx.input("embeddings"), trajectory_dirs(ctx.earlier_outputs()), ctx.out,
               known=known_proof_states(ctx, ctx.settings.ebm.hindsight), adapter_dir=ctx.input("lora_adapter"))


EBM = StageSpec(
    name="ebm", gpu=True, settings=Settings, run=_run, earlier="trajectories",
    inputs=(Input("embeddings"), Input("base_tactic_pairs", edge=False), Input("base_model", edge=False),
            Input("lora_adapter", edge=False)),
    doc="Energy-head weights, config and metrics (energy gap, rank-1 accuracy, embedding separation); iteration 0 "
        "has no EBM. With ``ebm.hindsight`` the searches that proved nothing add their known proofs' states as "
        "positives. With ``ebm.joint``: the head lora_adapter[N] trained with the adapter, measured and recorded "
        "as trained jointly.",
)
